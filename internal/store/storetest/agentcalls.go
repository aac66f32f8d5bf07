package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Agent calls (drover mcp): a live run's agent writes a report once, and
// comments or progress while its run is open under its own claim; a call
// from an ended run or a stale claim writes nothing.

// liveRun claims a fresh card for owner and returns the card, its claim and
// the open run.
func liveRun(t *testing.T, s store.Store, title, owner string) (board.Card, board.Claim, board.Run) {
	t.Helper()
	c := mkCard(t, s, title, "ready")
	must(t, claim(s, c, owner))
	c, err := s.GetCard(ctx, c.ID)
	must(t, err)
	runs, err := s.ListRuns(ctx, store.RunFilter{CardID: c.ID, Open: store.Bool(true)})
	must(t, err)
	if len(runs) != 1 {
		t.Fatalf("open runs = %+v", runs)
	}
	return c, *c.Claim, runs[0]
}

func agentEvent(c board.Card, r board.Run, typ, reason string) []board.Event {
	return []board.Event{{CardID: c.ID, RunID: r.ID, Type: typ, Actor: "agent:a", Reason: reason}}
}

// testLateReportRefusesRouting: a routing that read the run without a
// report (RunUnreported) is refused with ErrConflict, writing nothing, when
// the agent's report landed after that read; read again, the routing sees
// the report and its write goes through with it kept.
func testLateReportRefusesRouting(t *testing.T, s store.Store) {
	c, cl, r := liveRun(t, s, "late report", "n1")
	read, err := s.GetRun(ctx, r.ID) // routing's read: no report yet
	must(t, err)
	if read.Report != nil {
		t.Fatalf("fresh run has a report: %+v", read.Report)
	}
	rep := &board.AgentReport{Kind: board.ReportBlock, What: "the endpoint is gone", Where: "spec.endpoint", How: "name another", At: time.Now().UTC().Truncate(time.Millisecond)}
	must(t, s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Report: rep}}))
	fin := read
	fin.Outcome, fin.Kind = board.OutcomeSucceeded, "succeeded"
	next := c
	next.Claim, next.State = nil, "review"
	err = s.Apply(ctx, store.Change{Card: &next, ClaimGuard: &cl, Run: &fin, RunMustBeOpen: true, RunUnreported: true,
		Events: []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvFinished, Actor: "dispatcher:n1", Reason: "decided without the report"}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("routing decided without the report that landed meanwhile: err = %v, want ErrConflict", err)
	}
	got, err := s.GetRun(ctx, r.ID)
	must(t, err)
	if !got.Open() || got.Report == nil || got.Report.Kind != board.ReportBlock {
		t.Fatalf("after the refused routing: run %+v, want still open with the agent's report", got)
	}
	if cur, err := s.GetCard(ctx, c.ID); err != nil || cur.Version != c.Version || cur.Claim == nil {
		t.Fatalf("the refused routing touched the card: %+v, %v", cur, err)
	}
	evs, err := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	must(t, err)
	for _, e := range evs {
		if e.Type == board.EvFinished {
			t.Fatalf("the refused routing wrote its event: %+v", e)
		}
	}
	// Decided again with the report read: written, report kept.
	fin = got
	fin.Outcome, fin.Kind = board.OutcomeBlocked, "agent_blocked"
	next.State = "blocked"
	must(t, s.Apply(ctx, store.Change{Card: &next, ClaimGuard: &cl, Run: &fin, RunMustBeOpen: true, RunUnreported: got.Report == nil}))
	got, err = s.GetRun(ctx, r.ID)
	must(t, err)
	if got.Outcome != board.OutcomeBlocked || got.Report == nil || got.Report.What != rep.What {
		t.Fatalf("after routing again: run %+v", got)
	}
}

// testAgentReportOnce: the first report is stored and read back (GetRun and
// ListRuns); a second one is refused with ErrConflict and writes nothing,
// not even its event; routing the run afterwards keeps the report.
func testAgentReportOnce(t *testing.T, s store.Store) {
	c, cl, r := liveRun(t, s, "report", "n1")
	at := time.Now().UTC().Truncate(time.Millisecond)
	rep := &board.AgentReport{Kind: board.ReportBlock, What: "the API the card names does not exist", Where: "spec.endpoint", How: "name an existing endpoint", At: at}
	must(t, s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Report: rep},
		Events: agentEvent(c, r, board.EvAgentReport, "blocked")}))
	second := &board.AgentReport{Kind: board.ReportDone, Summary: "done after all", At: at}
	if err := s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Report: second},
		Events: agentEvent(c, r, board.EvAgentReport, "second")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second report: err = %v, want ErrConflict", err)
	}
	got, err := s.GetRun(ctx, r.ID)
	must(t, err)
	if got.Report == nil || got.Report.Kind != board.ReportBlock || got.Report.What != rep.What || got.Report.Where != rep.Where ||
		got.Report.How != rep.How || !got.Report.At.Equal(at) {
		t.Fatalf("stored report = %+v, want %+v", got.Report, rep)
	}
	// Routing replaces the run row; the report stays as the agent wrote it.
	got.Outcome, got.Kind = board.OutcomeBlocked, "agent_blocked"
	got.Report = nil
	must(t, s.Apply(ctx, store.Change{Run: &got, RunMustBeOpen: true}))
	listed, err := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	must(t, err)
	if len(listed) != 1 || listed[0].Report == nil || listed[0].Report.What != rep.What || listed[0].Outcome != board.OutcomeBlocked {
		t.Fatalf("after routing: runs = %+v", listed)
	}
	evs, err := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	must(t, err)
	n := 0
	for _, e := range evs {
		if e.Type == board.EvAgentReport {
			n++
			if e.RunID != r.ID || e.Reason != "blocked" {
				t.Fatalf("report event = %+v", e)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d agent_report events, want 1 (the refused second report writes none)", n)
	}
}

// testAgentCallFencing: a comment from a live run is stored with its event;
// after the run ends, or under a claim epoch that is no longer the card's,
// the same call is refused with ErrConflict and adds no comment or event.
func testAgentCallFencing(t *testing.T, s store.Store) {
	c, cl, r := liveRun(t, s, "fence", "n1")
	comment := func(body string, guard board.Claim) store.Change {
		return store.Change{ClaimGuard: &guard, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID},
			Comments: []board.Comment{{CardID: c.ID, Author: "agent:a", Body: body}}, Events: agentEvent(c, r, board.EvCommented, body)}
	}
	must(t, s.Apply(ctx, comment("live", cl)))
	stale := cl
	stale.Epoch--
	if err := s.Apply(ctx, comment("stale epoch", stale)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale claim epoch: err = %v, want ErrConflict", err)
	}
	if err := s.Apply(ctx, store.Change{ClaimGuard: &stale, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID,
		Report: &board.AgentReport{Kind: board.ReportAsk, Question: "stale?"}}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("report under a stale claim epoch: err = %v, want ErrConflict", err)
	}
	// The run ends (its claim still on the card, as between routing's
	// run write and a later card write would never be; the run guard alone
	// must refuse).
	ended := r
	ended.Outcome, ended.Kind = board.OutcomeFailed, "agent_failed"
	must(t, s.Apply(ctx, store.Change{Run: &ended, RunMustBeOpen: true}))
	if err := s.Apply(ctx, comment("after the end", cl)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("comment after the run ended: err = %v, want ErrConflict", err)
	}
	if err := s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID,
		Report: &board.AgentReport{Kind: board.ReportDone, Summary: "late"}}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("report after the run ended: err = %v, want ErrConflict", err)
	}
	cs, err := s.ListComments(ctx, c.ID)
	must(t, err)
	if len(cs) != 1 || cs[0].Body != "live" {
		t.Fatalf("comments = %+v, want only the live one", cs)
	}
	got, _ := s.GetRun(ctx, r.ID)
	if got.Report != nil {
		t.Fatalf("refused reports left %+v on the run", got.Report)
	}
	evs, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	for _, e := range evs {
		if e.Type == board.EvCommented && e.Reason != "live" {
			t.Fatalf("a refused call wrote event %+v", e)
		}
	}
}

// testAgentBounds: an agent's comments and progress notes are capped per
// run and per card; a call past a cap is refused with a *LimitError and
// writes nothing; calls at once never pass the cap; a negative cap is none.
func testAgentBounds(t *testing.T, s store.Store) {
	c, cl, r := liveRun(t, s, "chatty", "n1")
	bound := func(kind string, perRun, perCard int) *store.AgentBound {
		return &store.AgentBound{Kind: kind, PerRun: perRun, PerCard: perCard}
	}
	comment := func(r board.Run, cl board.Claim, b *store.AgentBound, body string) error {
		return s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Bound: b},
			Comments: []board.Comment{{CardID: c.ID, Author: "agent:a", Body: body}}, Events: agentEvent(c, r, board.EvCommented, body)})
	}
	progress := func(r board.Run, cl board.Claim, b *store.AgentBound, note string) error {
		return s.Apply(ctx, store.Change{ClaimGuard: &cl, AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Bound: b},
			Events: agentEvent(c, r, board.EvAgentProgress, note)})
	}
	for i := range 2 {
		must(t, comment(r, cl, bound(store.BoundComments, 2, 3), fmt.Sprint("c", i)))
		must(t, progress(r, cl, bound(store.BoundProgress, 2, -1), fmt.Sprint("p", i)))
	}
	var le *store.LimitError
	if err := comment(r, cl, bound(store.BoundComments, 2, 3), "one too many"); !errors.As(err, &le) || le.PerCard || le.Limit != 2 || le.Count != 2 {
		t.Fatalf("third comment of the run: err = %v, want the run's LimitError", err)
	}
	if err := progress(r, cl, bound(store.BoundProgress, 2, -1), "one too many"); !errors.As(err, &le) || le.Kind != store.BoundProgress {
		t.Fatalf("third note of the run: err = %v, want a LimitError", err)
	}
	// An operator's comment is not the agent's: it counts toward no cap.
	must(t, s.Apply(ctx, store.Change{Comments: []board.Comment{{CardID: c.ID, Author: "operator", Body: "human"}}}))
	// The next run of the card: its own run cap, the card's cap counting both.
	ended := r
	ended.Outcome, ended.Kind = board.OutcomeFailed, "agent_failed"
	next, _ := s.GetCard(ctx, c.ID)
	next.Claim, next.State = nil, "ready"
	must(t, s.Apply(ctx, store.Change{Card: &next, Run: &ended, RunMustBeOpen: true}))
	next, _ = s.GetCard(ctx, c.ID)
	next.Claim = &board.Claim{Owner: "n1", Epoch: next.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	next.State = "in_progress"
	r2 := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 2, RetryEpoch: next.RetryEpoch, ClaimEpoch: next.Claim.Epoch, Node: "n1"}
	must(t, s.Apply(ctx, store.Change{Card: &next, NewRun: &r2}))
	cl2 := *next.Claim
	must(t, comment(r2, cl2, bound(store.BoundComments, 2, 3), "third on the card"))
	if err := comment(r2, cl2, bound(store.BoundComments, 2, 3), "fourth on the card"); !errors.As(err, &le) || !le.PerCard || le.Limit != 3 || le.Count != 3 {
		t.Fatalf("fourth comment on the card: err = %v, want the card's LimitError", err)
	}
	must(t, comment(r2, cl2, bound(store.BoundComments, -1, -1), "no cap"))
	cs, err := s.ListComments(ctx, c.ID)
	must(t, err)
	if len(cs) != 5 { // c0, c1, human, third, no cap
		t.Fatalf("comments = %d, want 5: a refused call writes nothing", len(cs))
	}
	// Calls at once: exactly the cap's worth get in.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = progress(r2, cl2, bound(store.BoundProgress, 5, -1), fmt.Sprint("race ", i))
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.As(err, &le) && !errors.Is(err, store.ErrConflict):
			t.Fatalf("a racing note: %v", err)
		}
	}
	evs, err := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	must(t, err)
	n := 0
	for _, e := range evs {
		if e.Type == board.EvAgentProgress && e.RunID == r2.ID {
			n++
		}
	}
	if n > 5 || n != ok {
		t.Fatalf("%d notes written by %d accepted racing calls, want at most the cap of 5", n, ok)
	}
}
