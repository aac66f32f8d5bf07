package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Runs: one routing per run, half-written transactions, heartbeats,
// progress and what a run launched.

func testRunRoutedOnce(t *testing.T, s store.Store) {
	c := mkCard(t, s, "r", "ready")
	must(t, claim(s, c, "a"))
	runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID, Open: store.Bool(true)})
	if len(runs) != 1 || !runs[0].Open() {
		t.Fatalf("open runs = %+v", runs)
	}
	r := runs[0]
	r.Outcome, r.Kind, r.Counted = board.OutcomeFailed, "agent_failed", true
	route := store.Change{Run: &r, RunMustBeOpen: true, Events: []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvFinished}},
		Outbox: []store.OutboxItem{{Key: "card/run/failed", Channel: "slack", Event: "gave_up", Payload: json.RawMessage(`{}`)}}}
	must(t, s.Apply(ctx, route))
	if err := s.Apply(ctx, route); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second routing: err = %v, want ErrConflict", err)
	}
	got, _ := s.GetRun(ctx, r.ID)
	if got.Outcome != board.OutcomeFailed || !got.Counted || got.Attempt != 1 {
		t.Fatalf("run = %+v", got)
	}
	ob, _ := s.ListOutbox(ctx, store.OutboxFilter{})
	ev, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	if len(ob) != 1 || len(ev) != 3 {
		t.Fatalf("after double routing: %d outbox rows (want 1), %d events (want 3)", len(ob), len(ev))
	}
}

// testRunSessionID: the agent's session id written with a run's outcome is
// read back, so the attempt after an answer can resume that session.
func testRunSessionID(t *testing.T, s store.Store) {
	c := mkCard(t, s, "s", "ready")
	must(t, claim(s, c, "a"))
	runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if len(runs) != 1 || runs[0].SessionID != "" {
		t.Fatalf("a new run has session %+v, want none", runs)
	}
	r := runs[0]
	r.Outcome, r.Kind, r.SessionID = board.OutcomeParked, "input_required", "5f0c1d2e-session"
	must(t, s.Apply(ctx, store.Change{Run: &r, RunMustBeOpen: true}))
	got, err := s.GetRun(ctx, r.ID)
	must(t, err)
	if got.SessionID != "5f0c1d2e-session" {
		t.Fatalf("GetRun session = %q, want 5f0c1d2e-session", got.SessionID)
	}
	listed, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if len(listed) != 1 || listed[0].SessionID != "5f0c1d2e-session" {
		t.Fatalf("ListRuns session = %+v", listed)
	}
}

// testHalfWritten: a change whose last statement fails leaves none of its
// earlier statements behind, as a crash between them would.
func testHalfWritten(t *testing.T, s store.Store) {
	c := mkCard(t, s, "h", "ready")
	must(t, claim(s, c, "a"))
	c, _ = s.GetCard(ctx, c.ID)
	before := c.Version
	c.Title = "half"
	dup := board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch} // attempt 1 exists already
	err := s.Apply(ctx, store.Change{Card: &c, Events: []board.Event{{CardID: c.ID, Type: board.EvEdited}}, NewRun: &dup})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate attempt: err = %v, want ErrConflict", err)
	}
	got, _ := s.GetCard(ctx, c.ID)
	if got.Title != "h" || got.Version != before {
		t.Fatalf("card half-written: %+v", got)
	}
	ev, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	for _, e := range ev {
		if e.Type == board.EvEdited {
			t.Fatal("event of a refused change was kept")
		}
	}
}

func testHeartbeat(t *testing.T, s store.Store) {
	c := mkCard(t, s, "hb", "ready")
	must(t, claim(s, c, "a"))
	c, _ = s.GetCard(ctx, c.ID)
	until := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	must(t, s.Heartbeat(ctx, c.ID, "a", c.Claim.Epoch, until))
	got, _ := s.GetCard(ctx, c.ID)
	if !got.Claim.LeaseUntil.Equal(until) || got.Version != c.Version {
		t.Fatalf("heartbeat: lease %v (want %v), version %d (want unchanged %d)", got.Claim.LeaseUntil, until, got.Version, c.Version)
	}
	past := time.Now().Add(time.Hour)
	exp, _ := s.ListCards(ctx, store.CardFilter{LeaseExpiredBefore: &past})
	if len(exp) != 0 {
		t.Fatal("a renewed lease is listed as expired")
	}
	far := time.Now().Add(3 * time.Hour)
	exp, _ = s.ListCards(ctx, store.CardFilter{LeaseExpiredBefore: &far})
	if len(exp) != 1 {
		t.Fatalf("expired leases = %d, want 1", len(exp))
	}
}

func testProgress(t *testing.T, s store.Store) {
	c := mkCard(t, s, "p", "ready")
	must(t, claim(s, c, "a"))
	runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	now := time.Now().Truncate(time.Millisecond)
	must(t, s.UpdateRunProgress(ctx, runs[0].ID, store.RunProgress{LastOutput: "working", TokensIn: 10, TokensOut: 5, CostUSD: 0.25, StartedAt: &now, LogPath: "/l"}))
	r, _ := s.GetRun(ctx, runs[0].ID)
	if r.LastOutput != "working" || r.TokensIn != 10 || r.CostUSD != 0.25 || r.StartedAt == nil || r.LogPath != "/l" {
		t.Fatalf("progress = %+v", r)
	}
	// An empty log path keeps the one recorded; a finished run takes no
	// more progress.
	must(t, s.UpdateRunProgress(ctx, r.ID, store.RunProgress{LastOutput: "more", Workspace: "/w"}))
	r, _ = s.GetRun(ctx, r.ID)
	if r.LastOutput != "more" || r.LogPath != "/l" || r.Workspace != "/w" {
		t.Fatalf("second progress = %+v", r)
	}
	r.Outcome = board.OutcomeSucceeded
	must(t, s.Apply(ctx, store.Change{Run: &r, RunMustBeOpen: true}))
	must(t, s.UpdateRunProgress(ctx, r.ID, store.RunProgress{LastOutput: "late"}))
	if got, _ := s.GetRun(ctx, r.ID); got.LastOutput != "more" {
		t.Fatalf("progress reached a finished run: %+v", got)
	}
}

// testRunLaunch: the command line and variable names an agent ran with are
// kept on its run; progress without them leaves them alone, and a run
// written whole keeps its own.
func testRunLaunch(t *testing.T, s store.Store) {
	c := mkCard(t, s, "l", "ready")
	must(t, claim(s, c, "a"))
	runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	r := runs[0]
	if r.Argv == nil || len(r.Argv) != 0 || len(r.EnvNames) != 0 {
		t.Fatalf("a new run has argv %q, env %q; want empty lists", r.Argv, r.EnvNames)
	}
	argv := []string{"claude", "-p", "--api-key", "[redacted]"}
	must(t, s.UpdateRunProgress(ctx, r.ID, store.RunProgress{Argv: argv, EnvNames: []string{"ANTHROPIC_API_KEY", "PATH"}}))
	must(t, s.UpdateRunProgress(ctx, r.ID, store.RunProgress{LastOutput: "working"}))
	r, _ = s.GetRun(ctx, r.ID)
	if strings.Join(r.Argv, " ") != "claude -p --api-key [redacted]" || strings.Join(r.EnvNames, " ") != "ANTHROPIC_API_KEY PATH" {
		t.Fatalf("launch = %q %q", r.Argv, r.EnvNames)
	}
	r.Outcome = board.OutcomeSucceeded
	r.Argv = append(r.Argv, "--model", "x")
	must(t, s.Apply(ctx, store.Change{Run: &r, RunMustBeOpen: true}))
	got, _ := s.GetRun(ctx, r.ID)
	if strings.Join(got.Argv, " ") != "claude -p --api-key [redacted] --model x" || len(got.EnvNames) != 2 {
		t.Fatalf("after Apply: %q %q", got.Argv, got.EnvNames)
	}
}

// testAgentBytes: text an agent wrote is kept whatever its bytes. An agent's
// final message may hold invalid UTF-8 or a NUL (a binary file cat'ed, a
// broken locale); PostgreSQL refuses such text outright, and that once made
// every tick fail. Each backend stores it as valid UTF-8, the bad bytes as
// U+FFFD (one for each run of them), and the rest of the change lands.
func testAgentBytes(t *testing.T, s store.Store) {
	c := mkCard(t, s, "bytes", "ready")
	must(t, claim(s, c, "a"))
	runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	r := runs[0]
	dirty := "deploy \xff\xfe to \x00 staging?"
	const clean = "deploy \uFFFD to \uFFFD staging?"
	must(t, s.UpdateRunProgress(ctx, r.ID, store.RunProgress{LastOutput: dirty}))
	r.Outcome, r.Kind, r.Error, r.LastOutput = board.OutcomeParked, "input_required", dirty, dirty
	c, _ = s.GetCard(ctx, c.ID)
	c.StateReason = "asked for input (" + dirty + ")"
	must(t, s.Apply(ctx, store.Change{Card: &c, Run: &r, RunMustBeOpen: true,
		Comments: []board.Comment{{CardID: c.ID, Author: "agent:script", Body: "Question: " + dirty}},
		Events:   []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvEdited, Reason: dirty}}}))
	got, err := s.GetRun(ctx, r.ID)
	must(t, err)
	if got.Error != clean || got.LastOutput != clean {
		t.Errorf("run error %q, last output %q; want both %q", got.Error, got.LastOutput, clean)
	}
	if gc, _ := s.GetCard(ctx, c.ID); gc.StateReason != "asked for input ("+clean+")" {
		t.Errorf("card state reason %q", gc.StateReason)
	}
	if cs, _ := s.ListComments(ctx, c.ID); len(cs) != 1 || cs[0].Body != "Question: "+clean {
		t.Errorf("comments %+v", cs)
	}
	found := false
	ev, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	for _, e := range ev {
		found = found || (e.Type == board.EvEdited && e.Reason == clean)
	}
	if !found {
		t.Errorf("no edited event with reason %q in %+v", clean, ev)
	}
}

// testRunFingerprints: a run's fingerprint, basis and verify result are
// read back; the
// filters by profile, fingerprint and finish time find a hold's peers; an
// Uncount clears counted only on finished, counted runs, in the change's
// transaction.
func testRunFingerprints(t *testing.T, s store.Store) {
	basis := map[string]string{"card": "c1", "profile": "p1"}
	var ids []string
	for i, fp := range []string{"unknown:aa", "unknown:aa", "unknown:bb"} {
		c := mkCard(t, s, "f", "ready")
		c.Agent = "claude"
		cur, _ := s.GetCard(ctx, c.ID)
		cur.Claim = &board.Claim{Owner: "n", Epoch: cur.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
		agent := "claude"
		if i == 1 {
			agent = "codex"
		}
		run := board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: cur.RetryEpoch, ClaimEpoch: cur.Claim.Epoch, Agent: agent, Basis: basis}
		must(t, s.Apply(ctx, store.Change{Card: &cur, NewRun: &run}))
		got, _ := s.GetRun(ctx, run.ID)
		if got.Basis["card"] != "c1" || got.Basis["profile"] != "p1" || len(got.Basis) != 2 {
			t.Fatalf("basis written at claim = %v, want %v", got.Basis, basis)
		}
		fin := time.Now().Add(time.Duration(i-2) * time.Minute)
		got.Outcome, got.Kind, got.Counted, got.Fingerprint, got.FinishedAt = board.OutcomeFailed, "unknown", true, fp, &fin
		got.Verify = &board.VerifyResult{Passed: false, Ran: 2, Command: "go test ./...", ExitCode: 1, Output: "--- FAIL: TestX\nünï", DurationMS: 1500}
		must(t, s.Apply(ctx, store.Change{Run: &got, RunMustBeOpen: true}))
		if back, _ := s.GetRun(ctx, got.ID); back.Verify == nil || *back.Verify != *got.Verify {
			t.Fatalf("verify written %+v, read back %+v", got.Verify, back.Verify)
		}
		ids = append(ids, got.ID)
	}
	since := time.Now().Add(-90 * time.Second)
	peers, err := s.ListRuns(ctx, store.RunFilter{Agent: "claude", Fingerprint: "unknown:aa"})
	must(t, err)
	if len(peers) != 1 || peers[0].ID != ids[0] || peers[0].Fingerprint != "unknown:aa" {
		t.Fatalf("claude's unknown:aa runs = %+v, want only the first", peers)
	}
	recent, _ := s.ListRuns(ctx, store.RunFilter{Agent: "claude", FinishedSince: &since})
	if len(recent) != 1 || recent[0].ID != ids[2] {
		t.Fatalf("claude's runs finished since %s = %+v, want only the third", since, recent)
	}
	if ok, _ := s.ListRuns(ctx, store.RunFilter{Agent: "claude", Outcome: board.OutcomeSucceeded}); len(ok) != 0 {
		t.Fatalf("claude's succeeded runs = %+v, want none", ok)
	}
	if failed, _ := s.ListRuns(ctx, store.RunFilter{Agent: "claude", Outcome: board.OutcomeFailed}); len(failed) != 2 {
		t.Fatalf("claude's failed runs = %+v, want two", failed)
	}
	counted := func() []bool {
		var out []bool
		for _, id := range ids {
			r, _ := s.GetRun(ctx, id)
			out = append(out, r.Counted)
		}
		return out
	}
	must(t, s.Apply(ctx, store.Change{Uncount: &store.Uncount{Agent: "claude", Fingerprint: "unknown:aa", Since: time.Now().Add(-90 * time.Second)}}))
	if got := counted(); !got[0] || !got[1] || !got[2] {
		t.Fatalf("an uncount since after the run finished changed it: counted %v", got)
	}
	must(t, s.Apply(ctx, store.Change{Uncount: &store.Uncount{Agent: "claude", Fingerprint: "unknown:aa", Since: time.Now().Add(-3 * time.Minute)}, Events: []board.Event{{Type: "agent_open"}}}))
	if got := counted(); got[0] || !got[1] || !got[2] {
		t.Fatalf("after uncounting claude's unknown:aa runs: counted %v, want only the first uncounted (the second is codex's, the third another failure)", got)
	}
}

// testAgentGuard: a change guarded on a profile's state version is written
// only while the state is still at that version, and refused whole
// otherwise. A guard on "no row yet" (0) writes the closed row that stands
// for it.
func testAgentGuard(t *testing.T, s store.Store) {
	c := mkCard(t, s, "g", "ready")
	ev := func(reason string) []board.Event { return []board.Event{{CardID: c.ID, Type: "note", Reason: reason}} }
	must(t, s.Apply(ctx, store.Change{AgentGuard: &store.AgentGuard{Name: "claude"}, Events: ev("no row yet")}))
	states, _ := s.ListAgentStates(ctx)
	if len(states) != 1 || states[0].State != "closed" {
		t.Fatalf("after a guard on no row: agent states = %+v, want one closed row", states)
	}
	closedAt := states[0].Version
	must(t, s.Apply(ctx, store.Change{AgentState: &store.AgentState{Name: "claude", State: "open", Data: json.RawMessage(`{}`), UpdatedAt: time.Now(), Version: closedAt}}))
	states, _ = s.ListAgentStates(ctx)
	v := states[0].Version
	for _, stale := range []int64{0, closedAt} {
		if err := s.Apply(ctx, store.Change{AgentGuard: &store.AgentGuard{Name: "claude", Version: stale}, Events: ev("stale")}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a guard on version %d, before the write: err = %v, want ErrConflict", stale, err)
		}
	}
	must(t, s.Apply(ctx, store.Change{AgentGuard: &store.AgentGuard{Name: "claude", Version: v}, Events: ev("current")}))
	evs, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	var reasons []string
	for _, e := range evs {
		if e.Type == "note" {
			reasons = append(reasons, e.Reason)
		}
	}
	if strings.Join(reasons, ",") != "no row yet,current" {
		t.Fatalf("guarded writes that landed: %v, want no row yet,current", reasons)
	}
}

// testLiveCap: a claim capped at one open run of its agent is refused while
// another is open (its card untouched), others' agents do not count, a
// finished run frees the slot, and claims racing from many goroutines
// (PostgreSQL: many connections) never leave more open runs than the cap.
func testLiveCap(t *testing.T, s store.Store) {
	claim := func(agent string, max int) (board.Run, error) {
		c := mkCard(t, s, "capped", "ready")
		cur, _ := s.GetCard(ctx, c.ID)
		cur.Claim = &board.Claim{Owner: "n", Epoch: cur.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
		run := board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: cur.RetryEpoch, ClaimEpoch: cur.Claim.Epoch, Agent: agent}
		return run, s.Apply(ctx, store.Change{Card: &cur, NewRun: &run, LiveCap: &store.LiveCap{Agent: agent, Max: max}})
	}
	first, err := claim("codex", 1)
	must(t, err)
	if _, err := claim("codex", 1); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second open codex run under a cap of 1: err %v, want ErrConflict", err)
	}
	if open, _ := s.ListRuns(ctx, store.RunFilter{Agent: "codex", Open: store.Bool(true)}); len(open) != 1 {
		t.Fatalf("%d open codex runs after the refused claim, want 1 (nothing of it written)", len(open))
	}
	if _, err := claim("claude", 1); err != nil {
		t.Fatalf("another agent's claim counted codex's run: %v", err)
	}
	got, _ := s.GetRun(ctx, first.ID)
	fin := time.Now()
	got.Outcome, got.FinishedAt = board.OutcomeSucceeded, &fin
	must(t, s.Apply(ctx, store.Change{Run: &got, RunMustBeOpen: true}))
	if _, err := claim("codex", 1); err != nil {
		t.Fatalf("a claim after the open run finished: %v", err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := claim("gemini", 2); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, store.ErrConflict) {
				t.Errorf("racing capped claim: %v", err)
			}
		}()
	}
	wg.Wait()
	open, _ := s.ListRuns(ctx, store.RunFilter{Agent: "gemini", Open: store.Bool(true)})
	if ok != 2 || len(open) != 2 {
		t.Fatalf("8 racing claims under a cap of 2: %d written, %d open runs; want 2 and 2", ok, len(open))
	}
}

// testLiveCapBatches: a batch with three claims of one profile capped at 2
// writes two and refuses one; two nodes' batches racing over overlapping
// cards and two capped profiles, in opposite orders, are never refused
// whole (PostgreSQL: the capped profiles' locks are taken in one order
// before any card row, so the batches cannot deadlock).
func testLiveCapBatches(t *testing.T, s store.Store) {
	claim := func(c board.Card, agent string, max int) store.Change {
		cur := c
		cur.Claim = &board.Claim{Owner: "n", Epoch: cur.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
		run := board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: cur.RetryEpoch, ClaimEpoch: cur.Claim.Epoch, Agent: agent}
		return store.Change{Card: &cur, NewRun: &run, LiveCap: &store.LiveCap{Agent: agent, Max: max}}
	}
	var batch []store.Change
	for range 3 {
		batch = append(batch, claim(mkCard(t, s, "b", "ready"), "gemini", 2))
	}
	refused, err := s.ApplyAll(ctx, batch)
	must(t, err)
	if open, _ := s.ListRuns(ctx, store.RunFilter{Agent: "gemini", Open: store.Bool(true)}); len(open) != 2 || refused[2] == nil {
		t.Fatalf("three capped claims in one batch under a cap of 2: %d open, refused %v; want 2 open and the third refused", len(open), refused)
	}
	for round := range 10 {
		c := []board.Card{mkCard(t, s, "r", "ready"), mkCard(t, s, "r", "ready"), mkCard(t, s, "r", "ready"), mkCard(t, s, "r", "ready")}
		a := []store.Change{claim(c[0], "codex", 100), claim(c[1], "codex", 100), claim(c[2], "claude", 100)}
		b := []store.Change{claim(c[1], "claude", 100), claim(c[2], "codex", 100), claim(c[3], "codex", 100)}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, chs := range [][]store.Change{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = s.ApplyAll(ctx, chs) }()
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				t.Fatalf("round %d: a whole batch refused: %v", round, e)
			}
		}
	}
}
