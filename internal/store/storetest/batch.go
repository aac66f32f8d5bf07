package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// claimChange is the change claim writes, for ApplyAll.
func claimChange(c board.Card, owner string) store.Change {
	c.Claim = &board.Claim{Owner: owner, Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	return store.Change{Card: &c,
		NewRun: &board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: c.Claim.Epoch, Node: owner},
		Events: []board.Event{{CardID: c.ID, Type: board.EvClaimed, Actor: "dispatcher:" + owner}}}
}

// testApplyAllEachChangeAlone: a batch of claims where one card moved on
// (version guard), one has the attempt already (unique run), one would
// close a blocker cycle, and one is routed by a stale owner. Exactly those
// are refused, each with its own error and nothing of it written; the
// others are written whole, and their events come in the batch's order.
func testApplyAllEachChangeAlone(t *testing.T, s store.Store) {
	ok1 := mkCard(t, s, "ok1", "ready")
	moved := mkCard(t, s, "moved", "ready")
	dup := mkCard(t, s, "dup", "ready")
	ok2 := mkCard(t, s, "ok2", "ready")
	cyc := mkCard(t, s, "cycle", "ready")
	stale := mkCard(t, s, "stale", "ready")
	// moved changes under the batch; dup's attempt 1 exists already.
	m := moved
	m.Title = "edited"
	must(t, s.Apply(ctx, store.Change{Card: &m}))
	must(t, claim(s, dup, "other"))
	d, _ := s.GetCard(ctx, dup.ID)
	d.Claim = nil
	must(t, s.Apply(ctx, store.Change{Card: &d}))
	d, _ = s.GetCard(ctx, dup.ID)
	// cyc would wait on ok1, which waits on cyc.
	o1 := ok1
	o1.BlockedBy = []string{cyc.ID}
	must(t, s.Apply(ctx, store.Change{Card: &o1, CheckBlockers: true}))
	ok1, _ = s.GetCard(ctx, ok1.ID)
	cy := cyc
	cy.BlockedBy = []string{ok1.ID}
	// stale was claimed by a, then taken over by b.
	must(t, claim(s, stale, "a"))
	st, _ := s.GetCard(ctx, stale.ID)
	held := *st.Claim
	st.Claim = &board.Claim{Owner: "b", Epoch: held.Epoch + 1, LeaseUntil: time.Now().Add(time.Minute)}
	must(t, s.Apply(ctx, store.Change{Card: &st, ClaimGuard: &held}))
	st, _ = s.GetCard(ctx, stale.ID)
	late := st
	late.Claim, late.State = nil, "review"

	before, _ := s.ListEvents(ctx, store.EventFilter{})
	chs := []store.Change{
		claimChange(ok1, "n"),
		claimChange(moved, "n"), // stale version
		claimChange(d, "n"),     // attempt 1 of the epoch exists
		claimChange(ok2, "n"),
		{Card: &cy, CheckBlockers: true, Events: []board.Event{{CardID: cyc.ID, Type: "edited", Actor: "op"}}},
		{Card: &late, ClaimGuard: &held, Events: []board.Event{{CardID: stale.ID, Type: board.EvFinished, Actor: "dispatcher:a"}}},
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	if len(refused) != len(chs) {
		t.Fatalf("ApplyAll returned %d results for %d changes", len(refused), len(chs))
	}
	var ce *store.CycleError
	for i, want := range []string{"", "conflict", "conflict", "", "cycle", "conflict"} {
		got := refused[i]
		switch {
		case want == "" && got != nil:
			t.Errorf("change %d refused: %v, want written", i, got)
		case want == "conflict" && !errors.Is(got, store.ErrConflict):
			t.Errorf("change %d: err = %v, want ErrConflict", i, got)
		case want == "cycle" && !errors.As(got, &ce):
			t.Errorf("change %d: err = %v, want a *store.CycleError", i, got)
		}
	}
	// The written claims are whole: card claimed, one run, one event each.
	for _, c := range []board.Card{ok1, ok2} {
		got, _ := s.GetCard(ctx, c.ID)
		runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		if got.Claim == nil || got.Claim.Owner != "n" || got.Version != c.Version+1 || len(runs) != 1 {
			t.Errorf("%s: claim %+v version %d runs %d, want claimed by n at version %d with one run", c.Identifier, got.Claim, got.Version, len(runs), c.Version+1)
		}
	}
	// The refused ones wrote nothing: card, run and events as before.
	if got, _ := s.GetCard(ctx, moved.ID); got.Claim != nil || got.Title != "edited" {
		t.Errorf("refused claim of a moved card wrote %+v", got)
	}
	if runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: dup.ID}); len(runs) != 1 {
		t.Errorf("refused duplicate attempt: %d runs, want the 1 from before", len(runs))
	}
	if got, _ := s.GetCard(ctx, dup.ID); got.Claim != nil || got.Version != d.Version {
		t.Errorf("refused duplicate attempt wrote the card: %+v", got)
	}
	if got, _ := s.GetCard(ctx, cyc.ID); len(got.BlockedBy) != 0 {
		t.Errorf("refused cycle wrote blocked_by %v", got.BlockedBy)
	}
	if got, _ := s.GetCard(ctx, stale.ID); got.Claim == nil || got.Claim.Owner != "b" || got.State != "in_progress" {
		t.Errorf("a stale owner's batched write reached the card: %+v", got)
	}
	after, _ := s.ListEvents(ctx, store.EventFilter{SinceSeq: before[len(before)-1].Seq})
	if len(after) != 2 || after[0].CardID != ok1.ID || after[1].CardID != ok2.ID || after[0].Seq >= after[1].Seq {
		t.Fatalf("events after the batch %+v, want one claimed event of %s then one of %s", after, ok1.Identifier, ok2.Identifier)
	}
	// An empty batch writes nothing and refuses nothing.
	if refused, err := s.ApplyAll(ctx, nil); err != nil || len(refused) != 0 {
		t.Fatalf("empty ApplyAll = %v, %v", refused, err)
	}
}

// testApplyAllClaimRace: batches from several nodes claiming the same cards
// at once. Every card is claimed exactly once, with exactly one run, and
// every change is either written whole or refused with ErrConflict.
func testApplyAllClaimRace(t *testing.T, s store.Store) {
	var cards []board.Card
	for i := 0; i < 8; i++ {
		cards = append(cards, mkCard(t, s, fmt.Sprint("race ", i), "ready"))
	}
	const nodes = 4
	results := make([][]error, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for n := 0; n < nodes; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			var chs []store.Change
			for i := range cards { // each node in another order
				chs = append(chs, claimChange(cards[(i+n*3)%len(cards)], fmt.Sprint("node", n)))
			}
			results[n], errs[n] = s.ApplyAll(ctx, chs)
		}(n)
	}
	wg.Wait()
	wins := 0
	for n := 0; n < nodes; n++ {
		if errs[n] != nil {
			// A whole batch the database refused (a serialization failure)
			// must say so as a conflict, having written nothing.
			if !errors.Is(errs[n], store.ErrConflict) {
				t.Fatalf("node%d: ApplyAll error %v, want nil or ErrConflict", n, errs[n])
			}
			continue
		}
		for _, err := range results[n] {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("node%d: change error %v, want nil or ErrConflict", n, err)
			}
		}
	}
	if wins != len(cards) {
		t.Fatalf("%d claims written for %d cards, want exactly one each", wins, len(cards))
	}
	for _, c := range cards {
		runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		got, _ := s.GetCard(ctx, c.ID)
		if len(runs) != 1 || got.Claim == nil || runs[0].Node != got.Claim.Owner {
			t.Fatalf("%s: %d runs, claim %+v: want one run by the one owner", c.Identifier, len(runs), got.Claim)
		}
	}
}

// testHeartbeatAll: one call renews every claim still held by the owner at
// its epoch and names the others; it never touches another owner's claim
// or moves a version.
func testHeartbeatAll(t *testing.T, s store.Store) {
	held := mkCard(t, s, "held", "ready")
	held2 := mkCard(t, s, "held2", "ready")
	taken := mkCard(t, s, "taken", "ready")
	other := mkCard(t, s, "other", "ready")
	for _, c := range []board.Card{held, held2, taken} {
		must(t, claim(s, c, "a"))
	}
	must(t, claim(s, other, "b"))
	epochs := map[string]int64{}
	for _, c := range []board.Card{held, held2, taken} {
		got, _ := s.GetCard(ctx, c.ID)
		epochs[c.ID] = got.Claim.Epoch
	}
	// taken passes to b (recovery after its lease ended).
	tk, _ := s.GetCard(ctx, taken.ID)
	was := *tk.Claim
	tk.Claim = &board.Claim{Owner: "b", Epoch: was.Epoch + 1, LeaseUntil: time.Now().Add(time.Minute)}
	must(t, s.Apply(ctx, store.Change{Card: &tk, ClaimGuard: &was}))
	ob, _ := s.GetCard(ctx, other.ID)
	epochs[other.ID] = ob.Claim.Epoch // b's claim, asked for by a
	versions := map[string]int64{}
	for id := range epochs {
		c, _ := s.GetCard(ctx, id)
		versions[id] = c.Version
	}
	until := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	lost, err := s.HeartbeatAll(ctx, "a", epochs, until)
	must(t, err)
	lostSet := map[string]bool{}
	for _, id := range lost {
		lostSet[id] = true
	}
	if len(lost) != 2 || !lostSet[taken.ID] || !lostSet[other.ID] {
		t.Fatalf("lost = %v, want %s and %s", lost, taken.ID, other.ID)
	}
	for id := range epochs {
		c, _ := s.GetCard(ctx, id)
		renewed := c.Claim != nil && c.Claim.LeaseUntil.Equal(until)
		if renewed == lostSet[id] || c.Version != versions[id] {
			t.Errorf("%s: claim %+v version %d (was %d): want renewed=%v and the version unchanged", c.Identifier, c.Claim, c.Version, versions[id], !lostSet[id])
		}
	}
	// More claims than one statement takes still renew all of them.
	many := map[string]int64{}
	for i := 0; i < 1100; i++ {
		many[fmt.Sprint("no-such-card-", i)] = 1
	}
	many[held.ID] = epochs[held.ID]
	lost, err = s.HeartbeatAll(ctx, "a", many, until.Add(time.Hour))
	must(t, err)
	if c, _ := s.GetCard(ctx, held.ID); len(lost) != 1100 || !c.Claim.LeaseUntil.Equal(until.Add(time.Hour)) {
		t.Fatalf("1101 claims: %d lost (want 1100), lease %v", len(lost), c.Claim.LeaseUntil)
	}
	if lost, err := s.HeartbeatAll(ctx, "a", nil, until); err != nil || len(lost) != 0 {
		t.Fatalf("no claims: lost %v, err %v", lost, err)
	}
}

// testProgressInAChange: Change.Progress writes open runs' figures with the
// rest of its change: all of it, or none when the change is refused, and
// never to a run that has its outcome.
func testProgressInAChange(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready")
	b := mkCard(t, s, "b", "ready")
	must(t, claim(s, a, "n"))
	must(t, claim(s, b, "n"))
	ra, _ := s.ListRuns(ctx, store.RunFilter{CardID: a.ID})
	rb, _ := s.ListRuns(ctx, store.RunFilter{CardID: b.ID})
	now := time.Now().Truncate(time.Millisecond)
	stale, _ := s.GetCard(ctx, a.ID)
	stale.Version-- // a guard that fails
	refused, err := s.ApplyAll(ctx, []store.Change{
		{Progress: []store.RunProgress{{RunID: ra[0].ID, StartedAt: &now, LogPath: "/a.log", Workspace: "/wa"}},
			Events: []board.Event{{CardID: a.ID, RunID: ra[0].ID, Type: board.EvStarted, Actor: "n"}}},
		{Card: &stale, Progress: []store.RunProgress{{RunID: rb[0].ID, LastOutput: "refused", LogPath: "/b.log"}}},
	})
	must(t, err)
	if refused[0] != nil || !errors.Is(refused[1], store.ErrConflict) {
		t.Fatalf("refused = %v, want [nil ErrConflict]", refused)
	}
	got, _ := s.GetRun(ctx, ra[0].ID)
	if got.StartedAt == nil || !got.StartedAt.Equal(now) || got.LogPath != "/a.log" || got.Workspace != "/wa" {
		t.Fatalf("progress in a change: run %+v", got)
	}
	if gb, _ := s.GetRun(ctx, rb[0].ID); gb.LastOutput != "" || gb.LogPath != "" {
		t.Fatalf("a refused change's progress was written: %+v", gb)
	}
	got.Outcome = board.OutcomeSucceeded
	must(t, s.Apply(ctx, store.Change{Run: &got, RunMustBeOpen: true}))
	must(t, s.Apply(ctx, store.Change{Progress: []store.RunProgress{{RunID: ra[0].ID, LastOutput: "late", TokensIn: 9}}}))
	if r, _ := s.GetRun(ctx, ra[0].ID); r.LastOutput == "late" || r.TokensIn == 9 {
		t.Fatalf("progress reached a routed run: %+v", r)
	}
}

// A node's flush: many runs' live figures in one change, every open run
// written with its own figures, a routed one left as it was, and the
// flush not announced to watchers on PostgreSQL (nothing waits on it).
func testProgressFlush(t *testing.T, s store.Store) {
	var runs []board.Run
	for i := range 5 {
		c := mkCard(t, s, fmt.Sprint("f", i), "ready")
		must(t, claim(s, c, "n"))
		rs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		runs = append(runs, rs[0])
	}
	done := runs[4]
	done.Outcome = board.OutcomeSucceeded
	must(t, s.Apply(ctx, store.Change{Run: &done, RunMustBeOpen: true}))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := s.Watch(wctx)
	drain := func() {
		for {
			select {
			case <-watch:
			case <-time.After(300 * time.Millisecond):
				return
			}
		}
	}
	drain()
	var ps []store.RunProgress
	for i, r := range runs {
		ps = append(ps, store.RunProgress{RunID: r.ID, LastOutput: fmt.Sprint("line ", i), TokensIn: int64(10 * i), TokensOut: int64(i), CostUSD: float64(i) / 4})
	}
	must(t, s.Apply(ctx, store.Change{Progress: ps}))
	for i, r := range runs {
		got, _ := s.GetRun(ctx, r.ID)
		if i == 4 {
			if got.LastOutput != "" || got.TokensIn != 0 {
				t.Fatalf("a flush reached the routed run: %+v", got)
			}
			continue
		}
		if got.LastOutput != fmt.Sprint("line ", i) || got.TokensIn != int64(10*i) || got.TokensOut != int64(i) || got.CostUSD != float64(i)/4 {
			t.Fatalf("run %d after the flush: %+v", i, got)
		}
	}
	if s.Backend() != "postgres" {
		return // SQLite's watch sees every commit (PRAGMA data_version)
	}
	select {
	case <-watch:
		t.Fatal("a flush of live figures alone was announced to watchers")
	case <-time.After(300 * time.Millisecond):
	}
}
