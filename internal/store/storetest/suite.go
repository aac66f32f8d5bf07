// Package storetest is the one conformance suite every store.Store backend must
// pass. Backends call Run from their own tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Opener returns a fresh, empty store for one test.
type Opener func(t *testing.T) store.Store

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"ListFilters", testListFilters},
		{"CardOrders", testCardOrders},
		{"CardFilters", testCardFilters},
		{"RunFilters", testRunFilters},
		{"EventFilters", testEventFilters},
		{"OutboxFilters", testOutboxFilters},
		{"Ping", testPing},
		{"ConcurrentCreates", testConcurrentCreates},
		{"VersionConflictWritesNothing", testVersionConflict},
		{"ClaimRace", testClaimRace},
		{"ClaimGuardFencing", testClaimGuard},
		{"RecoveryRefusesARenewedLease", testLeaseEndedBy},
		{"RunRoutedOnce", testRunRoutedOnce},
		{"RunSessionID", testRunSessionID},
		{"RunFingerprints", testRunFingerprints},
		{"RunChanges", testRunChanges},
		{"CardPull", testCardPull},
		{"AgentGuard", testAgentGuard},
		{"LiveCap", testLiveCap},
		{"LiveCapBatches", testLiveCapBatches},
		{"AgentBytes", testAgentBytes},
		{"HalfWrittenTransaction", testHalfWritten},
		{"Heartbeat", testHeartbeat},
		{"HeartbeatAll", testHeartbeatAll},
		{"ApplyAllEachChangeAlone", testApplyAllEachChangeAlone},
		{"ApplyAllClaimRace", testApplyAllClaimRace},
		{"ApplyAllRoutingRefusals", testApplyAllRoutingRefusals},
		{"ApplyAllLargeBatch", testApplyAllLargeBatch},
		{"ApplyAllCleansText", testApplyAllCleansText},
		{"ApplyAllProgressBatch", testApplyAllProgressBatch},
		{"ProgressInAChange", testProgressInAChange},
		{"ProgressFlush", testProgressFlush},
		{"Progress", testProgress},
		{"RunLaunch", testRunLaunch},
		{"AgentReportOnce", testAgentReportOnce},
		{"LateReportRefusesRouting", testLateReportRefusesRouting},
		{"AgentBounds", testAgentBounds},
		{"AgentCallFencing", testAgentCallFencing},
		{"Events", testEvents},
		{"Comments", testComments},
		{"Outbox", testOutbox},
		{"AgentStates", testAgentStates},
		{"Spend", testSpend},
		{"NodesAndLeader", testNodesAndLeader},
		{"NodeNameHeldByOne", testNodeNameHeld},
		{"BlockerCycleRefused", testBlockerCycle},
		{"Watch", testWatch},
		{"Retention", testRetention},
		{"ExternalLink", testExternal},
		{"TrackerKeyLookup", testTrackerKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func mkCard(t *testing.T, s store.Store, title, state string, mut ...func(*board.Card)) board.Card {
	t.Helper()
	c := board.Card{Title: title, State: state, Spec: json.RawMessage(`{}`)}
	for _, m := range mut {
		m(&c)
	}
	out, err := s.CreateCard(ctx, "DRV", c, "operator")
	if err != nil {
		t.Fatalf("CreateCard: %v", err)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testCreateAndGet(t *testing.T, s store.Store) {
	a := mkCard(t, s, "first", "ready", func(c *board.Card) {
		c.Labels = []string{"x", "y"}
		c.Spec = json.RawMessage(`{"plan":"p"}`)
		c.Priority = 2
		c.Body = "body ✓"
	})
	b := mkCard(t, s, "second", "backlog")
	if a.Identifier != "DRV-1" || b.Identifier != "DRV-2" {
		t.Fatalf("identifiers %s %s, want DRV-1 DRV-2", a.Identifier, b.Identifier)
	}
	// Each prefix counts on its own.
	ops, err := s.CreateCard(ctx, "OPS", board.Card{Title: "ops", State: "ready"}, "operator")
	must(t, err)
	if third := mkCard(t, s, "third", "ready"); ops.Identifier != "OPS-1" || third.Identifier != "DRV-3" {
		t.Fatalf("identifiers %s %s, want OPS-1 DRV-3", ops.Identifier, third.Identifier)
	}
	for _, ref := range []string{a.ID, "DRV-1", "drv-1"} {
		got, err := s.GetCard(ctx, ref)
		must(t, err)
		if got.ID != a.ID || got.Body != "body ✓" || got.Priority != 2 || string(got.Spec) != `{"plan":"p"}` ||
			len(got.Labels) != 2 || got.RetryEpoch != 1 || got.Version != 1 {
			t.Fatalf("GetCard(%s) = %+v", ref, got)
		}
	}
	if _, err := s.GetCard(ctx, "DRV-99"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing card: err = %v, want ErrNotFound", err)
	}
	ev, err := s.ListEvents(ctx, store.EventFilter{CardID: a.ID})
	must(t, err)
	if len(ev) != 1 || ev[0].Type != board.EvCreated || ev[0].Actor != "operator" {
		t.Fatalf("events %+v, want one created event", ev)
	}
}

func testListFilters(t *testing.T, s store.Store) {
	now := time.Now()
	later := now.Add(time.Hour)
	mkCard(t, s, "low", "ready", func(c *board.Card) { c.Priority = 4 })
	mkCard(t, s, "none", "ready")
	mkCard(t, s, "high", "ready", func(c *board.Card) { c.Priority = 1; c.Labels = []string{"urgent"} })
	mkCard(t, s, "later", "ready", func(c *board.Card) { c.NextAttemptAt = &later; c.Agent = "claude" })
	mkCard(t, s, "done one", "done", func(c *board.Card) { c.Labels = []string{"urgent"} })
	got, err := s.ListCards(ctx, store.CardFilter{States: []string{"ready"}})
	must(t, err)
	if titles(got) != "[high low none later]" {
		t.Fatalf("ready order = %v, want priority then age", titles(got))
	}
	got, _ = s.ListCards(ctx, store.CardFilter{Label: "urgent"})
	if titles(got) != "[high done one]" {
		t.Fatalf("label filter = %v", titles(got))
	}
	got, _ = s.ListCards(ctx, store.CardFilter{States: []string{"ready"}, DueBy: &now})
	if len(got) != 3 {
		t.Fatalf("due filter = %v, want 3 cards", titles(got))
	}
	got, _ = s.ListCards(ctx, store.CardFilter{Agent: "claude"})
	if len(got) != 1 || got[0].Title != "later" {
		t.Fatalf("agent filter = %v", titles(got))
	}
	got, _ = s.ListCards(ctx, store.CardFilter{Query: "DONE"})
	if len(got) != 1 {
		t.Fatalf("query filter = %v", titles(got))
	}
	got, _ = s.ListCards(ctx, store.CardFilter{Limit: 2, Offset: 1})
	if len(got) != 2 {
		t.Fatalf("paging = %v", titles(got))
	}
	counts, err := s.CountByState(ctx)
	must(t, err)
	if counts["ready"] != 4 || counts["done"] != 1 {
		t.Fatalf("counts = %v", counts)
	}
}

// titles are the cards' titles, in order.
func titles(cs []board.Card) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Title)
	}
	return fmt.Sprint(out)
}

// testCardOrders: each CardOrder sorts by its own column, and an unknown
// order is an error rather than a silent default.
func testCardOrders(t *testing.T, s store.Store) {
	now := time.Now()
	at := func(h int) *time.Time { v := now.Add(time.Duration(h) * time.Hour); return &v }
	a := mkCard(t, s, "a", "ready", func(c *board.Card) { c.Priority = 3; c.NextAttemptAt = at(1) })
	mkCard(t, s, "b", "ready", func(c *board.Card) { c.Priority = 1; c.NextAttemptAt = at(3) })
	c := mkCard(t, s, "c", "ready", func(c *board.Card) { c.NextAttemptAt = at(2) })
	mkCard(t, s, "d", "ready", func(c *board.Card) { c.Priority = 1 })
	// Touch a, then c, each with an updated_at in the future so that the
	// order does not hang on the clock's resolution.
	for i, card := range []board.Card{a, c} {
		card.UpdatedAt = *at(10 + i)
		must(t, s.Apply(ctx, store.Change{Card: &card}))
	}
	for _, tc := range []struct {
		order store.CardOrder
		want  string
	}{
		{store.OrderBoard, "[b d a c]"},       // priority 1 by age, 3, none
		{store.OrderUpdated, "[c a d b]"},     // newest update first
		{store.OrderNextAttempt, "[a c b d]"}, // soonest retry first, none last
	} {
		got, err := s.ListCards(ctx, store.CardFilter{Order: tc.order})
		must(t, err)
		if titles(got) != tc.want {
			t.Errorf("order %q = %v, want %v", tc.order, titles(got), tc.want)
		}
	}
	if _, err := s.ListCards(ctx, store.CardFilter{Order: "sideways"}); err == nil {
		t.Error("an unknown order listed cards, want an error")
	}
}

func testConcurrentCreates(t *testing.T, s store.Store) {
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.CreateCard(ctx, "DRV", board.Card{Title: fmt.Sprint("c", i), State: "ready", Spec: json.RawMessage(`{}`)}, "operator")
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	cards, err := s.ListCards(ctx, store.CardFilter{})
	must(t, err)
	seen := map[string]bool{}
	for _, c := range cards {
		if seen[c.Identifier] {
			t.Fatalf("identifier %s issued twice", c.Identifier)
		}
		seen[c.Identifier] = true
	}
	if len(cards) != n {
		t.Fatalf("%d cards, want %d", len(cards), n)
	}
	for i := 1; i <= n; i++ {
		if !seen[fmt.Sprintf("DRV-%d", i)] {
			t.Fatalf("DRV-%d missing: identifiers must be dense", i)
		}
	}
}

func testVersionConflict(t *testing.T, s store.Store) {
	c := mkCard(t, s, "v", "ready")
	stale := c
	c.Title = "renamed"
	must(t, s.Apply(ctx, store.Change{Card: &c, Events: []board.Event{{CardID: c.ID, Type: board.EvEdited}}}))
	stale.State = "done"
	err := s.Apply(ctx, store.Change{Card: &stale, Events: []board.Event{{CardID: c.ID, Type: board.EvMoved}},
		Outbox: []store.OutboxItem{{Key: "k1", Channel: "webhook", Event: "x", Payload: json.RawMessage(`{}`)}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale write: err = %v, want ErrConflict", err)
	}
	got, _ := s.GetCard(ctx, c.ID)
	if got.State != "ready" || got.Title != "renamed" || got.Version != 2 {
		t.Fatalf("after refused write card = %+v", got)
	}
	ev, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	if len(ev) != 2 {
		t.Fatalf("refused change wrote events: %+v", ev)
	}
	ob, _ := s.ListOutbox(ctx, store.OutboxFilter{})
	if len(ob) != 0 {
		t.Fatalf("refused change wrote outbox rows: %+v", ob)
	}
}

// claim applies a claim of c by owner the way the dispatcher does.
func claim(s store.Store, c board.Card, owner string) error {
	c.Claim = &board.Claim{Owner: owner, Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	return s.Apply(ctx, store.Change{Card: &c,
		NewRun: &board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: c.Claim.Epoch, Node: owner},
		Events: []board.Event{{CardID: c.ID, Type: board.EvClaimed, Actor: "dispatcher:" + owner}}})
}

func testClaimRace(t *testing.T, s store.Store) {
	for round := 0; round < 5; round++ {
		c := mkCard(t, s, "race", "ready")
		var wg sync.WaitGroup
		results := make([]error, 4)
		for i := range results {
			wg.Add(1)
			go func(i int) { defer wg.Done(); results[i] = claim(s, c, fmt.Sprint("node", i)) }(i)
		}
		wg.Wait()
		oneWins(t, "claimers of one card", results, store.ErrConflict)
		runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		if len(runs) != 1 {
			t.Fatalf("%d runs, want 1", len(runs))
		}
	}
}

func testClaimGuard(t *testing.T, s store.Store) {
	c := mkCard(t, s, "g", "ready")
	must(t, claim(s, c, "a"))
	c, _ = s.GetCard(ctx, c.ID)
	stale := *c.Claim
	// Another owner takes the card over (recovery after lease expiry).
	c.Claim = &board.Claim{Owner: "b", Epoch: stale.Epoch + 1, LeaseUntil: time.Now().Add(time.Minute)}
	must(t, s.Apply(ctx, store.Change{Card: &c, ClaimGuard: &stale}))
	c, _ = s.GetCard(ctx, c.ID)
	c.State = "review"
	err := s.Apply(ctx, store.Change{Card: &c, ClaimGuard: &stale})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale owner's write: err = %v, want ErrConflict", err)
	}
	if err := s.Heartbeat(ctx, c.ID, stale.Owner, stale.Epoch, time.Now().Add(time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale heartbeat: err = %v, want ErrConflict", err)
	}
}

// testLeaseEndedBy: recovery read an expired lease, the owner renewed it
// (heartbeats do not move the version), so recovery's write is refused.
func testLeaseEndedBy(t *testing.T, s store.Store) {
	c := mkCard(t, s, "l", "ready")
	must(t, claim(s, c, "a"))
	c, _ = s.GetCard(ctx, c.ID)
	held := *c.Claim
	must(t, s.Heartbeat(ctx, c.ID, held.Owner, held.Epoch, time.Now().Add(time.Minute)))
	now := time.Now()
	next := c
	next.Claim = nil
	err := s.Apply(ctx, store.Change{Card: &next, ClaimGuard: &held, LeaseEndedBy: &now})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("recovering a renewed lease: err = %v, want ErrConflict", err)
	}
	must(t, s.Heartbeat(ctx, c.ID, held.Owner, held.Epoch, time.Now().Add(-time.Second)))
	now = time.Now()
	must(t, s.Apply(ctx, store.Change{Card: &next, ClaimGuard: &held, LeaseEndedBy: &now}))
}

func testEvents(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready")
	b := mkCard(t, s, "b", "ready")
	all, _ := s.ListEvents(ctx, store.EventFilter{})
	if len(all) != 2 || all[0].Seq >= all[1].Seq {
		t.Fatalf("events = %+v", all)
	}
	since, _ := s.ListEvents(ctx, store.EventFilter{SinceSeq: all[0].Seq})
	if len(since) != 1 || since[0].CardID != b.ID {
		t.Fatalf("since cursor = %+v", since)
	}
	newest, _ := s.ListEvents(ctx, store.EventFilter{Limit: 1, Newest: true})
	if len(newest) != 1 || newest[0].CardID != b.ID {
		t.Fatalf("newest = %+v", newest)
	}
	_ = a
}

// testComments: one card's comments, oldest first (by their time, not by
// when they were written).
func testComments(t *testing.T, s store.Store) {
	c := mkCard(t, s, "c", "ready")
	other := mkCard(t, s, "other", "ready")
	now := time.Now()
	must(t, s.Apply(ctx, store.Change{Comments: []board.Comment{{CardID: c.ID, Author: "dispatcher", Body: "two", At: now}}}))
	must(t, s.Apply(ctx, store.Change{Comments: []board.Comment{{CardID: other.ID, Author: "operator", Body: "elsewhere"}}}))
	must(t, s.Apply(ctx, store.Change{Comments: []board.Comment{{CardID: c.ID, Author: "operator", Body: "one", At: now.Add(-time.Minute)}}}))
	cs, err := s.ListComments(ctx, c.ID)
	must(t, err)
	if len(cs) != 2 || cs[0].Body != "one" || cs[1].Author != "dispatcher" {
		t.Fatalf("comments = %+v", cs)
	}
}

func testOutbox(t *testing.T, s store.Store) {
	item := store.OutboxItem{Key: "c1/r1/gave_up/slack", Channel: "slack", Event: "gave_up", Payload: json.RawMessage(`{"a":1}`)}
	must(t, s.Apply(ctx, store.Change{Outbox: []store.OutboxItem{item}}))
	must(t, s.Apply(ctx, store.Change{Outbox: []store.OutboxItem{item}})) // same key: no-op
	due, err := s.DueOutbox(ctx, time.Now().Add(time.Second), 10)
	must(t, err)
	if len(due) != 1 || string(due[0].Payload) != `{"a":1}` {
		t.Fatalf("due = %+v", due)
	}
	retry := time.Now().Add(time.Hour)
	// A row waiting for its channel spends no attempt.
	must(t, s.MarkOutbox(ctx, due[0].ID, store.OutboxResult{At: time.Now(), Error: "waiting", NextAt: time.Now(), Waiting: true}))
	must(t, s.MarkOutbox(ctx, due[0].ID, store.OutboxResult{At: time.Now(), Error: "500", NextAt: retry}))
	if d, _ := s.DueOutbox(ctx, time.Now(), 10); len(d) != 0 {
		t.Fatal("an item scheduled for later is due now")
	}
	must(t, s.MarkOutbox(ctx, due[0].ID, store.OutboxResult{Delivered: true, At: time.Now()}))
	if d, _ := s.DueOutbox(ctx, retry.Add(time.Hour), 10); len(d) != 0 {
		t.Fatal("a delivered item is due again")
	}
	all, _ := s.ListOutbox(ctx, store.OutboxFilter{})
	if len(all) != 1 || all[0].Attempts != 2 || all[0].DeliveredAt == nil || all[0].LastError != "" {
		t.Fatalf("outbox = %+v", all)
	}
}

func testAgentStates(t *testing.T, s store.Store) {
	until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	// Written out of name order: ListAgentStates sorts by name.
	must(t, s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "codex", State: "paused", Kind: "auth_failed"}}))
	must(t, s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "open", Kind: "rate_limited", Reason: "429", Until: &until}}))
	// A second "first write" of the same profile loses: its reader was stale.
	if err := s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "closed"}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("insert over an existing state: err = %v, want ErrConflict", err)
	}
	as, _ := s.ListAgentStates(ctx)
	v := as[0].Version
	must(t, s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "half_open", Kind: "rate_limited", Until: &until, Version: v}}))
	// The same version again is a lost update: refused.
	if err := s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "open", Version: v}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale version: err = %v, want ErrConflict", err)
	}
	// An operator's resume writes whatever is stored.
	must(t, s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "codex", State: "closed", Version: -1}}))
	as, err := s.ListAgentStates(ctx)
	must(t, err)
	if len(as) != 2 || as[0].Name != "claude" || as[0].State != "half_open" || !as[0].Until.Equal(until) || as[0].Version != v+1 ||
		as[1].State != "closed" || as[1].Until != nil {
		t.Fatalf("agent states = %+v", as)
	}
}

func testSpend(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready")
	b := mkCard(t, s, "b", "ready")
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	for i, r := range []board.Run{
		{CardID: a.ID, Attempt: 1, RetryEpoch: 1, CostUSD: 1.5, ClaimedAt: now},
		{CardID: a.ID, Attempt: 2, RetryEpoch: 1, CostUSD: 0.5, ClaimedAt: now},
		{CardID: b.ID, Attempt: 1, RetryEpoch: 1, CostUSD: 2, ClaimedAt: now},
		{CardID: b.ID, Attempt: 2, RetryEpoch: 1, CostUSD: 9, ClaimedAt: old},
	} {
		r := r
		r.ID = fmt.Sprint("spend-run-", i)
		must(t, s.Apply(ctx, store.Change{NewRun: &r}))
	}
	day := now.Add(-time.Hour)
	total, _ := s.Spend(ctx, day, "")
	card, _ := s.Spend(ctx, day, a.ID)
	ever, _ := s.Spend(ctx, time.Time{}, b.ID)
	if total != 4 || card != 2 || ever != 11 {
		t.Fatalf("spend total %v (want 4), card %v (want 2), ever %v (want 11)", total, card, ever)
	}
}

// CheckBlockers refuses a change closing a cycle of blocked_by, also when
// two changes that close it together are applied at the same moment.
func testBlockerCycle(t *testing.T, s store.Store) {
	waitOn := func(c board.Card, on ...board.Card) store.Change {
		c.BlockedBy = []string{}
		for _, b := range on {
			c.BlockedBy = append(c.BlockedBy, b.ID)
		}
		return store.Change{Card: &c, CheckBlockers: true}
	}
	a, b, c := mkCard(t, s, "a", "ready"), mkCard(t, s, "b", "ready"), mkCard(t, s, "c", "ready")
	must(t, s.Apply(ctx, waitOn(b, a)))
	b, _ = s.GetCard(ctx, b.ID)
	must(t, s.Apply(ctx, waitOn(c, b)))
	err := s.Apply(ctx, waitOn(a, c))
	var cycle *store.CycleError
	if !errors.As(err, &cycle) || cycle.Blocker != c.ID || fmt.Sprint(cycle.Path) != fmt.Sprintf("[%s %s]", c.Identifier, b.Identifier) {
		t.Fatalf("a waiting on c (c → b → a): err = %v, want a CycleError through %s along [%s %s]", err, c.Identifier, c.Identifier, b.Identifier)
	}
	if got, _ := s.GetCard(ctx, a.ID); len(got.BlockedBy) != 0 {
		t.Fatalf("the refused change was written: %v", got.BlockedBy)
	}
	for round := range 20 {
		x, y := mkCard(t, s, fmt.Sprint("x", round), "ready"), mkCard(t, s, fmt.Sprint("y", round), "ready")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, ch := range []store.Change{waitOn(x, y), waitOn(y, x)} {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = s.Apply(ctx, ch) }()
		}
		wg.Wait()
		if errs[0] == nil && errs[1] == nil {
			t.Fatalf("round %d: %s waits on %s and %s on %s: both changes were written", round, x.Identifier, y.Identifier, y.Identifier, x.Identifier)
		}
		for _, err := range errs {
			if err != nil && !errors.As(err, &cycle) {
				t.Fatalf("round %d: %v, want a CycleError", round, err)
			}
		}
	}
}

func testWatch(t *testing.T, s store.Store) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := s.Watch(wctx)
	mkCard(t, s, "w", "ready")
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notification after a write")
	}
}

// oneWins fails t unless exactly one of errs, the results of racing
// writers, is nil and every other is lost.
func oneWins(t *testing.T, what string, errs []error, lost error) {
	t.Helper()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, lost):
			t.Fatalf("%s: error %v, want nil or %v", what, err, lost)
		}
	}
	if won != 1 {
		t.Fatalf("%s: %d of %d won, want exactly 1", what, won, len(errs))
	}
}
