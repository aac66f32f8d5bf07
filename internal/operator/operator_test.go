package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

var ctx = context.Background()

func newService(t *testing.T) (*operator.Service, string) {
	t.Helper()
	dsn := testkit.DSN(t, testkit.SQLite)
	return openService(t, dsn), dsn
}

func openService(t *testing.T, dsn string) *operator.Service {
	t.Helper()
	st := testkit.Open(t, dsn)
	return &operator.Service{Store: st, Board: board.Default(), Agents: []string{"claude", "sim"}, Actor: "operator:test"}
}

func ptr[T any](v T) *T { return &v }

func add(t *testing.T, s *operator.Service, title string) board.Card {
	t.Helper()
	c, err := s.Add(ctx, operator.Input{Title: &title})
	if err != nil {
		t.Fatalf("add %q: %v", title, err)
	}
	return c
}

func wantInput(t *testing.T, err error, field string) {
	t.Helper()
	var ie *board.InputError
	if !errors.As(err, &ie) || ie.Field != field {
		t.Fatalf("err = %v (%T), want *board.InputError{Field: %q}", err, err, field)
	}
}

func wantMove(t *testing.T, err error, substr string) {
	t.Helper()
	var me *board.MoveError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want *board.MoveError", err, err)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("err = %q, want it to contain %q", err, substr)
	}
}

func events(t *testing.T, s *operator.Service, cardID string) []board.Event {
	t.Helper()
	evs, err := s.Store.ListEvents(ctx, store.EventFilter{CardID: cardID})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func lastEvent(t *testing.T, s *operator.Service, cardID string) board.Event {
	t.Helper()
	evs := events(t, s, cardID)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs[len(evs)-1]
}

func TestAddDefaults(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "  Fix login  ")
	if c.State != "ready" {
		t.Errorf("state = %q, want the first eligible column (ready)", c.State)
	}
	if c.Identifier != "DRV-1" || c.ID == "" || c.Title != "Fix login" {
		t.Errorf("card = %+v", c)
	}
	if string(c.Spec) != "{}" || c.Labels == nil || c.BlockedBy == nil || c.RetryEpoch != 1 {
		t.Errorf("defaults: spec %s labels %v blocked_by %v epoch %d", c.Spec, c.Labels, c.BlockedBy, c.RetryEpoch)
	}
	ev := lastEvent(t, s, c.ID)
	if ev.Type != board.EvCreated || ev.Actor != "operator:test" {
		t.Errorf("created event = %+v", ev)
	}

	full, err := s.Add(ctx, operator.Input{Title: ptr("Full"), Body: ptr("# body"), State: ptr("backlog"), Priority: ptr(2),
		Labels: ptr([]string{"bug", "bug", "ui"}), Agent: ptr("claude"), Spec: ptr(json.RawMessage(`{ "plan" : "x" }`))})
	if err != nil {
		t.Fatal(err)
	}
	if full.State != "backlog" || full.Priority != 2 || strings.Join(full.Labels, ",") != "bug,ui" || full.Agent != "claude" || string(full.Spec) != `{"plan":"x"}` {
		t.Errorf("full card = %+v", full)
	}
}

func TestAddRefusals(t *testing.T) {
	s, _ := newService(t)
	cases := []struct {
		field string
		in    operator.Input
	}{
		{"title", operator.Input{}},
		{"title", operator.Input{Title: ptr("")}},
		{"title", operator.Input{Title: ptr("a\x00b")}},
		{"state", operator.Input{Title: ptr("x"), State: ptr("in_progress")}},
		{"state", operator.Input{Title: ptr("x"), State: ptr("doing")}},
		{"priority", operator.Input{Title: ptr("x"), Priority: ptr(9)}},
		{"agent", operator.Input{Title: ptr("x"), Agent: ptr("gpt")}},
		{"spec", operator.Input{Title: ptr("x"), Spec: ptr(json.RawMessage(`[1]`))}},
		{"blocked_by[0]", operator.Input{Title: ptr("x"), BlockedBy: ptr([]string{"DRV-99"})}},
	}
	for _, tc := range cases {
		_, err := s.Add(ctx, tc.in)
		wantInput(t, err, tc.field)
	}
	cards, _ := s.Store.ListCards(ctx, store.CardFilter{})
	if len(cards) != 0 {
		t.Fatalf("refused adds left %d cards", len(cards))
	}
	// The refusals did not consume identifiers.
	if c := add(t, s, "first"); c.Identifier != "DRV-1" {
		t.Fatalf("first card after refusals = %s", c.Identifier)
	}
}

func TestIdentifiersNeverReused(t *testing.T) {
	s, dsn := newService(t)
	for i := 1; i <= 3; i++ {
		add(t, s, fmt.Sprint("card ", i))
	}
	if _, err := s.Move(ctx, "DRV-1", "done", "shipped"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, "DRV-3", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block(ctx, "DRV-2", "waiting"); err != nil {
		t.Fatal(err)
	}
	if c := add(t, s, "fourth"); c.Identifier != "DRV-4" {
		t.Fatalf("after sinks: identifier %s, want DRV-4", c.Identifier)
	}
	// After a restart the counter continues.
	s.Store.Close()
	s2 := openService(t, dsn)
	if c := add(t, s2, "fifth"); c.Identifier != "DRV-5" {
		t.Fatalf("after restart: identifier %s, want DRV-5", c.Identifier)
	}
	// Another prefix has its own sequence.
	s2.Board.Prefix = "OPS"
	if c := add(t, s2, "ops"); c.Identifier != "OPS-1" {
		t.Fatalf("other prefix: %s", c.Identifier)
	}
	cards, _ := s2.Store.ListCards(ctx, store.CardFilter{})
	seen := map[string]bool{}
	for _, c := range cards {
		if seen[c.Identifier] {
			t.Fatalf("identifier %s twice", c.Identifier)
		}
		seen[c.Identifier] = true
	}
}

func TestGetByIDOrIdentifier(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	for _, ref := range []string{c.ID, c.Identifier, "drv-1", " DRV-1 "} {
		got, err := s.Get(ctx, ref)
		if err != nil || got.ID != c.ID {
			t.Errorf("Get(%q) = %v, %v", ref, got.ID, err)
		}
	}
	for _, ref := range []string{"DRV-2", "../../etc/passwd", "'; DROP TABLE cards; --"} {
		_, err := s.Get(ctx, ref)
		var nf *operator.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("Get(%q) err = %v, want NotFoundError", ref, err)
		}
	}
	_, err := s.Get(ctx, "  ")
	wantInput(t, err, "id")
}

func TestEditSpecOpensEpoch(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	// A title change does not open an epoch.
	c2, err := s.Edit(ctx, c.Identifier, operator.Input{Title: ptr("y")})
	if err != nil {
		t.Fatal(err)
	}
	if c2.RetryEpoch != 1 || c2.Title != "y" {
		t.Fatalf("title edit: %+v", c2)
	}
	// The same spec (after normalisation) does not either.
	c3, err := s.Edit(ctx, c.Identifier, operator.Input{Spec: ptr(json.RawMessage(` { } `))})
	if err != nil || c3.RetryEpoch != 1 {
		t.Fatalf("unchanged spec: epoch %d, %v", c3.RetryEpoch, err)
	}
	// A changed spec does, and clears the retry schedule.
	next := time.Now().Add(time.Hour)
	c3.NextAttemptAt = &next
	if err := s.Store.Apply(ctx, store.Change{Card: &c3}); err != nil {
		t.Fatal(err)
	}
	c4, err := s.Edit(ctx, c.Identifier, operator.Input{Spec: ptr(json.RawMessage(`{"plan":"b"}`))})
	if err != nil {
		t.Fatal(err)
	}
	if c4.RetryEpoch != 2 || c4.NextAttemptAt != nil || string(c4.Spec) != `{"plan":"b"}` {
		t.Fatalf("spec edit: epoch %d next %v spec %s", c4.RetryEpoch, c4.NextAttemptAt, c4.Spec)
	}
	ev := lastEvent(t, s, c.ID)
	if ev.Type != board.EvEdited || !strings.Contains(ev.Reason, "retry epoch 2") {
		t.Fatalf("edit event = %+v", ev)
	}
	// On a sink card a changed spec does not open an epoch (resume does).
	if _, err := s.Block(ctx, c.Identifier, "needs a plan"); err != nil {
		t.Fatal(err)
	}
	c5, err := s.Edit(ctx, c.Identifier, operator.Input{Spec: ptr(json.RawMessage(`{"plan":"c"}`))})
	if err != nil {
		t.Fatal(err)
	}
	if c5.RetryEpoch != 2 || c5.State != "blocked" {
		t.Fatalf("sink spec edit: epoch %d state %s", c5.RetryEpoch, c5.State)
	}
	// Edit never changes the state.
	_, err = s.Edit(ctx, c.Identifier, operator.Input{State: ptr("ready")})
	wantInput(t, err, "state")
	// A bad edit changes nothing.
	before, _ := s.Get(ctx, c.ID)
	_, err = s.Edit(ctx, c.Identifier, operator.Input{Title: ptr("ok"), Priority: ptr(7)})
	wantInput(t, err, "priority")
	after, _ := s.Get(ctx, c.ID)
	if after.Version != before.Version || after.Title != before.Title {
		t.Fatalf("refused edit changed the card: %+v → %+v", before, after)
	}
}

func giveUp(t *testing.T, s *operator.Service, ref string) board.Card {
	t.Helper()
	c, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	c.State = "blocked"
	c.BlockReason = &board.BlockReason{What: "failed 10 times", Where: "run r1", How: "drover card resume " + c.Identifier}
	c.GaveUp = &board.GaveUp{RunID: "r1", Attempts: 10, Kind: "agent_failed", Reason: "exit 1", At: time.Now()}
	next := time.Now().Add(time.Minute)
	c.NextAttemptAt = &next
	if err := s.Store.Apply(ctx, store.Change{Card: &c}); err != nil {
		t.Fatal(err)
	}
	c, _ = s.Get(ctx, ref)
	return c
}

func TestResumeReopen(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	blocked := giveUp(t, s, c.Identifier)
	if blocked.GaveUp == nil || blocked.BlockReason == nil {
		t.Fatal("setup: gave_up not stored")
	}
	// A plain move out of the sink is refused and hints at resume.
	_, err := s.Move(ctx, c.Identifier, "ready", "")
	wantMove(t, err, "drover card resume DRV-1")

	r, err := s.Resume(ctx, c.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "ready" || r.RetryEpoch != 2 || r.BlockReason != nil || r.GaveUp != nil || r.NextAttemptAt != nil {
		t.Fatalf("resumed card = %+v", r)
	}
	ev := lastEvent(t, s, c.ID)
	if ev.Type != board.EvResumed || ev.Actor != "operator:test" || !strings.Contains(string(ev.Data), `"from":"blocked"`) {
		t.Fatalf("resume event = %+v data %s", ev, ev.Data)
	}
	// Resume of an eligible card is refused.
	_, err = s.Resume(ctx, c.Identifier)
	wantMove(t, err, "nothing to resume")

	// done → reopen (resume refused with a hint).
	if _, err := s.Move(ctx, c.Identifier, "done", "merged"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Resume(ctx, c.Identifier)
	wantMove(t, err, "reopen DRV-1")
	_, err = s.Move(ctx, c.Identifier, "review", "")
	wantMove(t, err, "drover card reopen DRV-1")
	o, err := s.Reopen(ctx, c.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != "ready" || o.RetryEpoch != 3 {
		t.Fatalf("reopened card = %+v", o)
	}
	if ev := lastEvent(t, s, c.ID); ev.Type != board.EvReopened {
		t.Fatalf("reopen event = %+v", ev)
	}
	// Reopen of a ready card is refused; reopen of a gave-up card clears it.
	_, err = s.Reopen(ctx, c.Identifier)
	wantMove(t, err, "reopen applies to")
	giveUp(t, s, c.Identifier)
	o, err = s.Reopen(ctx, c.Identifier)
	if err != nil || o.GaveUp != nil || o.BlockReason != nil || o.RetryEpoch != 4 {
		t.Fatalf("reopen of gave-up card: %+v, %v", o, err)
	}
	// Cancelled → resume.
	if _, err := s.Cancel(ctx, c.Identifier, "not needed"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Cancel(ctx, c.Identifier, "")
	wantMove(t, err, "already cancelled")
	if r, err := s.Resume(ctx, c.Identifier); err != nil || r.State != "ready" || r.RetryEpoch != 5 {
		t.Fatalf("resume cancelled: %+v %v", r, err)
	}
}

func TestMoveRules(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	_, err := s.Move(ctx, c.Identifier, "in_progress", "")
	wantMove(t, err, "only the dispatcher")
	_, err = s.Move(ctx, c.Identifier, "limbo", "")
	wantInput(t, err, "state")
	m, err := s.Move(ctx, c.Identifier, "review", "looks done")
	if err != nil || m.State != "review" || m.StateReason != "looks done" {
		t.Fatalf("move: %+v %v", m, err)
	}
	ev := lastEvent(t, s, c.ID)
	if ev.Type != board.EvMoved || ev.Reason != "looks done" {
		t.Fatalf("move event %+v", ev)
	}
	_, err = s.Move(ctx, "DRV-77", "ready", "")
	var nf *operator.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("move unknown card: %v", err)
	}
}

func TestBlock(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	_, err := s.Block(ctx, c.Identifier, " ")
	wantInput(t, err, "reason")
	b, err := s.Block(ctx, c.Identifier, "needs creds")
	if err != nil {
		t.Fatal(err)
	}
	if b.State != "blocked" || b.BlockReason == nil || b.BlockReason.What != "needs creds" || !strings.Contains(b.BlockReason.How, "resume DRV-1") {
		t.Fatalf("blocked card %+v", b)
	}
	_, err = s.Block(ctx, c.Identifier, "again")
	wantMove(t, err, "already in blocked")
}

func TestAnswerOnlyParked(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	_, err := s.Answer(ctx, c.Identifier, "use postgres")
	wantMove(t, err, "not awaiting an answer")
	if _, err := s.Move(ctx, c.Identifier, "awaiting_input", "agent asked"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Answer(ctx, c.Identifier, "   ")
	wantInput(t, err, "text")
	_, err = s.Answer(ctx, c.Identifier, "bad\x00")
	wantInput(t, err, "text")
	a, err := s.Answer(ctx, c.Identifier, "use postgres\nand pgx")
	if err != nil {
		t.Fatal(err)
	}
	if a.State != "ready" {
		t.Fatalf("answered card state %s", a.State)
	}
	cms, _ := s.Store.ListComments(ctx, c.ID)
	if len(cms) != 1 || cms[0].Body != "use postgres\nand pgx" {
		t.Fatalf("comments %+v", cms)
	}
	ev := lastEvent(t, s, c.ID)
	if ev.Type != board.EvAnswered || ev.Reason != "use postgres …" {
		t.Fatalf("answer event %+v", ev)
	}
	// The event carries the whole answer and names its comment: the next
	// attempt's prompt reads the answer from it.
	var data struct {
		Answer    string `json:"answer"`
		CommentID string `json:"comment_id"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatalf("answer event data %s: %v", ev.Data, err)
	}
	if data.Answer != "use postgres\nand pgx" || data.CommentID == "" || data.CommentID != cms[0].ID {
		t.Fatalf("answer event data %s (comment %q)", ev.Data, cms[0].ID)
	}
}

func TestComment(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	nEv := len(events(t, s, c.ID))
	for _, text := range []string{"", "  \n ", "nul\x00", "\xff"} {
		_, err := s.Comment(ctx, c.Identifier, text)
		wantInput(t, err, "text")
	}
	if n := len(events(t, s, c.ID)); n != nEv {
		t.Fatalf("refused comments wrote %d events", n-nEv)
	}
	cm, err := s.Comment(ctx, c.Identifier, "looks good")
	if err != nil {
		t.Fatal(err)
	}
	if cm.ID == "" || cm.CardID != c.ID || cm.Body != "looks good" || cm.Author != "operator:test" || cm.At.IsZero() {
		t.Fatalf("comment = %+v", cm)
	}
	cms, _ := s.Store.ListComments(ctx, c.ID)
	if len(cms) != 1 || cms[0].ID != cm.ID {
		t.Fatalf("stored comments %+v, returned id %s", cms, cm.ID)
	}
	if ev := lastEvent(t, s, c.ID); ev.Type != board.EvCommented {
		t.Fatalf("comment event %+v", ev)
	}
	cm2, err := s.Comment(ctx, c.ID, "second")
	if err != nil || cm2.ID == cm.ID {
		t.Fatalf("second comment %+v %v", cm2, err)
	}
	_, err = s.Comment(ctx, "DRV-9", "x")
	var nf *operator.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("comment on unknown card: %v", err)
	}
}

func TestBlockedBy(t *testing.T) {
	s, _ := newService(t)
	a := add(t, s, "a")
	b := add(t, s, "b")
	c, err := s.Add(ctx, operator.Input{Title: ptr("c"), BlockedBy: ptr([]string{"drv-1", b.ID, "DRV-1"})})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.BlockedBy, ",") != a.ID+","+b.ID {
		t.Fatalf("blocked_by = %v, want the ids of DRV-1 and DRV-2 once each", c.BlockedBy)
	}
	_, err = s.Add(ctx, operator.Input{Title: ptr("d"), BlockedBy: ptr([]string{"DRV-1", "DRV-404"})})
	wantInput(t, err, "blocked_by[1]")
	_, err = s.Edit(ctx, c.Identifier, operator.Input{BlockedBy: ptr([]string{c.Identifier})})
	wantInput(t, err, "blocked_by[0]")
	e, err := s.Edit(ctx, c.Identifier, operator.Input{BlockedBy: ptr([]string{})})
	if err != nil || len(e.BlockedBy) != 0 {
		t.Fatalf("clearing blocked_by: %+v %v", e.BlockedBy, err)
	}
}

func TestResumeAgent(t *testing.T) {
	s, _ := newService(t)
	_, err := s.ResumeAgent(ctx, "nope")
	wantInput(t, err, "name")
	until := time.Now().Add(time.Hour)
	if err := s.Store.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "paused", Kind: "auth_failed", Until: &until}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.ResumeAgent(ctx, "claude")
	if err != nil || st.State != "closed" {
		t.Fatalf("ResumeAgent: %+v %v", st, err)
	}
	states, _ := s.Store.ListAgentStates(ctx)
	if len(states) != 1 || states[0].State != "closed" || states[0].Until != nil {
		t.Fatalf("stored agent states %+v", states)
	}
	evs, _ := s.Store.ListEvents(ctx, store.EventFilter{})
	last := evs[len(evs)-1]
	if last.Type != "agent_resumed" || last.Actor != "operator:test" || !strings.Contains(string(last.Data), `"claude"`) {
		t.Fatalf("agent event %+v", last)
	}
}

// A card may not wait on a card that (through others) waits on it.
func TestBlockedByRefusesCycles(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	a := add(t, s, "a")
	b := add(t, s, "b")
	c := add(t, s, "c")
	if _, err := s.Edit(ctx, b.Identifier, operator.Input{BlockedBy: &[]string{a.Identifier}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Edit(ctx, c.Identifier, operator.Input{BlockedBy: &[]string{b.Identifier}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Edit(ctx, a.Identifier, operator.Input{BlockedBy: &[]string{c.Identifier}})
	wantInput(t, err, "blocked_by[0]")
	got, _ := s.Get(ctx, a.Identifier)
	if len(got.BlockedBy) != 0 {
		t.Fatalf("the refused edit was written: %+v", got.BlockedBy)
	}
	if !strings.Contains(err.Error(), "DRV-3 → DRV-2") {
		t.Fatalf("the refusal %q does not show the chain DRV-3 → DRV-2", err)
	}
	// An empty entry (--blocked-by "") clears the list: how a cycle is broken.
	if got, err := s.Edit(ctx, c.Identifier, operator.Input{BlockedBy: &[]string{""}}); err != nil || len(got.BlockedBy) != 0 {
		t.Fatalf("clearing blocked_by: %+v, %v", got.BlockedBy, err)
	}
}

// Two operators (two processes, each its own store connection) making two
// cards wait on each other at the same moment: at most one edit is written
// and the other is refused as a cycle, on every backend.
func TestParallelBlockedByEditsNeverCycle(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		dsn := testkit.DSN(t, b)
		s1, s2 := openService(t, dsn), openService(t, dsn)
		for round := range 20 {
			x, y := add(t, s1, fmt.Sprint("x", round)), add(t, s1, fmt.Sprint("y", round))
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, e := range []struct {
				s        *operator.Service
				card, on string
			}{{s1, x.Identifier, y.Identifier}, {s2, y.Identifier, x.Identifier}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = e.s.Edit(ctx, e.card, operator.Input{BlockedBy: &[]string{e.on}})
				}()
			}
			wg.Wait()
			if errs[0] == nil && errs[1] == nil {
				t.Fatalf("round %d: both edits were written: %s and %s wait on each other", round, x.Identifier, y.Identifier)
			}
			for _, err := range errs {
				if err != nil {
					wantInput(t, err, "blocked_by[0]")
				}
			}
		}
	})
}

// A spec edit of a running (claimed) card is refused with how to proceed,
// and changes nothing; other fields may still change (issue 13, item 8).
func TestEditSpecOfRunningCardRefused(t *testing.T) {
	s, _ := newService(t)
	c := add(t, s, "x")
	c.Claim = &board.Claim{Owner: "n1", Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	if err := s.Store.Apply(ctx, store.Change{Card: &c}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get(ctx, c.ID)
	_, err := s.Edit(ctx, c.Identifier, operator.Input{Spec: ptr(json.RawMessage(`{"plan":"b"}`))})
	wantInput(t, err, "spec")
	if !strings.Contains(err.Error(), "drover card cancel "+c.Identifier) {
		t.Fatalf("the refusal must say how to proceed: %v", err)
	}
	after, _ := s.Get(ctx, c.ID)
	if after.Version != before.Version || string(after.Spec) != string(before.Spec) || after.RetryEpoch != before.RetryEpoch {
		t.Fatalf("refused edit changed the card: %+v → %+v", before, after)
	}
	if _, err := s.Edit(ctx, c.Identifier, operator.Input{Title: ptr("renamed")}); err != nil {
		t.Fatalf("a title edit of a running card: %v", err)
	}
}

// TestUnknownBlockerMessageIsClipped: a --blocked-by (or API blocked_by)
// reference naming no card is quoted in the refusal clipped, as an unknown
// card ID is: a 1.5 MB reference came back whole in the error (1.5 MB of
// JSON from POST /api/v1/cards, 1.5 MB on the terminal).
func TestUnknownBlockerMessageIsClipped(t *testing.T) {
	s, _ := newService(t)
	_, err := s.Add(ctx, operator.Input{Title: ptr("x"), BlockedBy: ptr([]string{strings.Repeat("k", 100_000)})})
	wantInput(t, err, "blocked_by[0]")
	if msg := err.Error(); len(msg) > 300 || !strings.Contains(msg, "tracker key") {
		t.Fatalf("refusal is %d bytes: %.200s", len(msg), msg)
	}
}
