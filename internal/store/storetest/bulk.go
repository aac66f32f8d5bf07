package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Batches shaped like a dispatcher's (claims, routings), each change of
// which a store treats on its own.

// routeChange is a routing of card c's open run by the claim's owner: the
// card leaves the claim, the run gets its outcome, with a comment, an
// outbox row and an event.
func routeChange(c board.Card, r board.Run, tag string) store.Change {
	held := *c.Claim
	next := c
	next.Claim, next.State = nil, "review"
	fin := r
	fin.Outcome, fin.Error = board.OutcomeSucceeded, "done "+tag
	now := time.Now()
	fin.FinishedAt = &now
	return store.Change{Card: &next, ClaimGuard: &held, Run: &fin, RunMustBeOpen: true,
		Comments: []board.Comment{{CardID: c.ID, Author: "dispatcher", Body: "routed " + tag}},
		Outbox:   []store.OutboxItem{{Key: c.ID + "/" + r.ID + "/" + tag, Channel: "webhook", Event: "done", CardID: c.ID, RunID: r.ID, Payload: []byte(`{}`)}},
		Events:   []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvFinished, Actor: "dispatcher:" + held.Owner, Reason: tag}}}
}

// claimed creates n cards claimed by owner, each with its open run.
func claimed(t *testing.T, s store.Store, n int, owner string) ([]board.Card, []board.Run) {
	t.Helper()
	var cs []board.Card
	var chs []store.Change
	for i := 0; i < n; i++ {
		c := mkCard(t, s, fmt.Sprint("c", i), "ready")
		cs = append(cs, c)
		chs = append(chs, claimChange(c, owner))
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	var runs []board.Run
	for i, c := range cs {
		if refused[i] != nil {
			t.Fatalf("claim %d refused: %v", i, refused[i])
		}
		cs[i], _ = s.GetCard(ctx, c.ID)
		rs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		if len(rs) != 1 {
			t.Fatalf("%s: %d runs after its claim", c.Identifier, len(rs))
		}
		runs = append(runs, rs[0])
	}
	return cs, runs
}

// testApplyAllRoutingRefusals: a batch of routings and claims in which one
// card's version is stale, one claim guard names a lost claim, one run has
// its outcome already and one claim's attempt is taken. Those four are
// refused, each with ErrConflict and nothing of it written (no card change,
// run, comment, outbox row or event); the others are written whole.
func testApplyAllRoutingRefusals(t *testing.T, s store.Store) {
	cs, runs := claimed(t, s, 5, "n")
	fresh := mkCard(t, s, "fresh", "ready")
	taken := mkCard(t, s, "taken", "ready")
	// taken's attempt 1 exists (claimed, then released).
	must(t, claim(s, taken, "other"))
	tk, _ := s.GetCard(ctx, taken.ID)
	tk.Claim = nil
	must(t, s.Apply(ctx, store.Change{Card: &tk}))
	tk, _ = s.GetCard(ctx, taken.ID)

	stale := routeChange(cs[1], runs[1], "stale")
	stale.Card.Version-- // the card moved on
	lost := routeChange(cs[2], runs[2], "lost")
	lost.ClaimGuard = &board.Claim{Owner: "n", Epoch: cs[2].Claim.Epoch + 7}
	lost.Card.Claim = cs[2].Claim // keep the card's claim so only the guard differs
	ended := routeChange(cs[3], runs[3], "ended")
	r3 := runs[3]
	r3.Outcome = board.OutcomeFailed
	must(t, s.Apply(ctx, store.Change{Run: &r3, RunMustBeOpen: true})) // routed already
	before, _ := s.ListEvents(ctx, store.EventFilter{})
	chs := []store.Change{
		routeChange(cs[0], runs[0], "ok0"),
		stale,
		lost,
		ended,
		claimChange(tk, "n"), // attempt 1 of the epoch exists
		routeChange(cs[4], runs[4], "ok4"),
		claimChange(fresh, "n"),
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	want := []bool{false, true, true, true, true, false, false} // refused?
	for i, w := range want {
		if w != (refused[i] != nil) || (w && !errors.Is(refused[i], store.ErrConflict)) {
			t.Errorf("change %d: refused = %v, want refused %v with ErrConflict", i, refused[i], w)
		}
	}
	for _, i := range []int{0, 4} {
		got, _ := s.GetCard(ctx, cs[i].ID)
		run, _ := s.GetRun(ctx, runs[i].ID)
		cm, _ := s.ListComments(ctx, cs[i].ID)
		ob, _ := s.ListOutbox(ctx, store.OutboxFilter{CardID: cs[i].ID})
		if got.Claim != nil || got.State != "review" || got.Version != cs[i].Version+1 || run.Outcome != board.OutcomeSucceeded ||
			len(cm) != 1 || len(ob) != 1 {
			t.Errorf("routing %d: card %+v run %q comments %d outbox %d, want written whole", i, got, run.Outcome, len(cm), len(ob))
		}
	}
	if got, _ := s.GetCard(ctx, fresh.ID); got.Claim == nil || got.Claim.Owner != "n" {
		t.Errorf("claim of a fresh card in the batch not written: %+v", got.Claim)
	}
	for _, i := range []int{1, 2, 3} {
		got, _ := s.GetCard(ctx, cs[i].ID)
		run, _ := s.GetRun(ctx, runs[i].ID)
		cm, _ := s.ListComments(ctx, cs[i].ID)
		ob, _ := s.ListOutbox(ctx, store.OutboxFilter{CardID: cs[i].ID})
		if got.Version != cs[i].Version || got.Claim == nil || len(cm) != 0 || len(ob) != 0 || run.Error != "" {
			t.Errorf("refused routing %d wrote: card version %d (was %d) claim %+v comments %d outbox %d run error %q",
				i, got.Version, cs[i].Version, got.Claim, len(cm), len(ob), run.Error)
		}
	}
	if run, _ := s.GetRun(ctx, runs[3].ID); run.Outcome != board.OutcomeFailed {
		t.Errorf("a routed run was routed again: outcome %q", run.Outcome)
	}
	if rs, _ := s.ListRuns(ctx, store.RunFilter{CardID: taken.ID}); len(rs) != 1 {
		t.Errorf("refused claim of a taken attempt: %d runs, want the 1 from before", len(rs))
	}
	if got, _ := s.GetCard(ctx, taken.ID); got.Version != tk.Version || got.Claim != nil {
		t.Errorf("refused claim of a taken attempt wrote the card: %+v", got)
	}
	after, _ := s.ListEvents(ctx, store.EventFilter{SinceSeq: before[len(before)-1].Seq})
	if len(after) != 3 || after[0].CardID != cs[0].ID || after[1].CardID != cs[4].ID || after[2].CardID != fresh.ID {
		t.Fatalf("events after the batch %+v, want those of routings 0 and 4 and the fresh claim, in that order", after)
	}
}

// testApplyAllLargeBatch: 320 claims, then 320 routings in one batch each
// (more than one statement of a backend may carry): all written, and the
// events' seq follows the batch's order.
func testApplyAllLargeBatch(t *testing.T, s store.Store) {
	const n = 320
	cs, runs := claimed(t, s, n, "n")
	var chs []store.Change
	for i := range cs {
		chs = append(chs, routeChange(cs[i], runs[i], fmt.Sprint("r", i)))
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	for i, e := range refused {
		if e != nil {
			t.Fatalf("routing %d refused: %v", i, e)
		}
	}
	all, _ := s.ListEvents(ctx, store.EventFilter{})
	var evs []board.Event // the claims' and the routings' events, in seq order
	for _, e := range all {
		if e.Type == board.EvClaimed || e.Type == board.EvFinished {
			evs = append(evs, e)
		}
	}
	if len(evs) != 2*n {
		t.Fatalf("%d events, want %d", len(evs), 2*n)
	}
	for i, c := range cs {
		claimEv, routeEv := evs[i], evs[n+i]
		if claimEv.CardID != c.ID || claimEv.Type != board.EvClaimed || routeEv.CardID != c.ID || routeEv.Reason != fmt.Sprint("r", i) {
			t.Fatalf("event %d/%d: %+v %+v, want the claim and the routing of %s in batch order", i, n+i, claimEv, routeEv, c.Identifier)
		}
	}
	for i := range cs {
		if run, _ := s.GetRun(ctx, runs[i].ID); run.Outcome != board.OutcomeSucceeded || run.Error != fmt.Sprint("done r", i) {
			t.Fatalf("run %d: %+v", i, run)
		}
	}
	ob, _ := s.ListOutbox(ctx, store.OutboxFilter{})
	if len(ob) != n {
		t.Fatalf("%d outbox rows, want %d", len(ob), n)
	}
}

// testApplyAllCleansText: invalid UTF-8 and NUL in every kind of row of a
// batch are stored as U+FFFD, the same on every backend, and the batch
// lands.
func testApplyAllCleansText(t *testing.T, s store.Store) {
	const dirty, clean = "bad \xff\xfe and \x00 here", "bad \uFFFD and \uFFFD here"
	cs, runs := claimed(t, s, 2, "n")
	var chs []store.Change
	for i := range cs {
		ch := routeChange(cs[i], runs[i], fmt.Sprint("t", i))
		ch.Card.Title = dirty
		ch.Run.Error = dirty
		ch.Comments[0].Body = dirty
		ch.Events[0].Reason = dirty
		ch.Outbox[0].Event = dirty
		chs = append(chs, ch)
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	for i := range cs {
		if refused[i] != nil {
			t.Fatalf("change %d refused: %v", i, refused[i])
		}
		c, _ := s.GetCard(ctx, cs[i].ID)
		r, _ := s.GetRun(ctx, runs[i].ID)
		cm, _ := s.ListComments(ctx, cs[i].ID)
		ob, _ := s.ListOutbox(ctx, store.OutboxFilter{CardID: cs[i].ID})
		evs, _ := s.ListEvents(ctx, store.EventFilter{CardID: cs[i].ID})
		last := evs[len(evs)-1]
		if c.Title != clean || r.Error != clean || len(cm) != 1 || cm[0].Body != clean || len(ob) != 1 || ob[0].Event != clean || last.Reason != clean {
			t.Fatalf("change %d stored %q %q %+v %+v %q, want %q everywhere", i, c.Title, r.Error, cm, ob, last.Reason, clean)
		}
	}
}

// testApplyAllProgressBatch: a batch of progress writes (with a started
// event) for several runs, one of which has its outcome: the open ones get
// their figures, the routed one is left as it is, and nothing is refused.
func testApplyAllProgressBatch(t *testing.T, s store.Store) {
	cs, runs := claimed(t, s, 3, "n")
	r2 := runs[2]
	r2.Outcome = board.OutcomeSucceeded
	must(t, s.Apply(ctx, store.Change{Run: &r2, RunMustBeOpen: true}))
	now := time.Now().Truncate(time.Millisecond)
	var chs []store.Change
	for i := range runs {
		chs = append(chs, store.Change{
			Progress: []store.RunProgress{{RunID: runs[i].ID, StartedAt: &now, LogPath: fmt.Sprint("/l", i), TokensIn: 5, CostUSD: 0.25,
				Argv: []string{"agent", fmt.Sprint(i)}}},
			Events: []board.Event{{CardID: cs[i].ID, RunID: runs[i].ID, Type: board.EvStarted, Actor: "n"}}})
	}
	refused, err := s.ApplyAll(ctx, chs)
	must(t, err)
	for i := range runs {
		if refused[i] != nil {
			t.Fatalf("progress %d refused: %v", i, refused[i])
		}
		r, _ := s.GetRun(ctx, runs[i].ID)
		open := i < 2
		got := r.StartedAt != nil && r.StartedAt.Equal(now) && r.LogPath == fmt.Sprint("/l", i) && r.TokensIn == 5 && r.CostUSD == 0.25 &&
			len(r.Argv) == 2 && r.Argv[1] == fmt.Sprint(i)
		if got != open {
			t.Fatalf("run %d (open %v): %+v", i, open, r)
		}
	}
}
