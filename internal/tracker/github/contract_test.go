package github_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

const (
	base     = "/repos/acme/app"
	fullList = "GET " + base + "/issues?direction=asc&per_page=100&sort=created&state=open → 200"
)

// A clean success: the issue is found, shows in progress while the agent
// runs, then review.
func TestContractSuccess(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Fix the login redirect", `{"sim": ["succeeded"]}`)
	w.syncOK()
	sameCalls(t, "first sync", w.calls(), fullList)
	c := w.card(n)
	if c.State != "ready" || c.External == nil || c.External.Key != "acme/app#1" || string(c.Spec) != `{"sim":["succeeded"]}` {
		t.Fatalf("mirrored card = %+v", c)
	}
	w.serve()
	w.waitState(n, "review")
	w.project()
	sameCalls(t, "success", w.calls(),
		`POST `+base+`/issues/1/labels {"labels":["drover:running"]} → 200`,
		`DELETE `+base+`/issues/1/labels/drover:running → 200`,
		`POST `+base+`/issues/1/labels {"labels":["drover:review"]} → 200`)
	if got := w.gh.Issue(n); got.State != "open" || strings.Join(got.Labels, ",") != "drover:review" {
		t.Errorf("issue after success: %+v", got)
	}
	// drover's own labels coming back in the next sync are not an edit.
	w.syncOK()
	evs, _ := w.st.ListEvents(context.Background(), store.EventFilter{CardID: c.ID})
	for _, e := range evs {
		if e.Type == board.EvEdited {
			t.Errorf("drover's own label write came back as an edit: %+v", e)
		}
	}
	if got := w.card(n); len(got.Labels) != 0 {
		t.Errorf("card labels = %v, want none (drover's are not the issue's)", got.Labels)
	}
}

// A give-up: every attempt fails; the issue ends blocked with a comment
// that says what, where and how.
func TestContractGiveUp(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Keeps failing", `{"sim": ["agent_failed"], "sim_delay": "10ms"}`)
	w.syncOK()
	w.calls()
	w.serve()
	c := w.waitState(n, "blocked")
	if c.GaveUp == nil {
		t.Fatalf("card blocked without a give-up: %+v", c)
	}
	w.project()
	sameCalls(t, "give-up", w.calls(),
		`POST `+base+`/issues/1/labels {"labels":["drover:running"]} → 200`,
		`DELETE `+base+`/issues/1/labels/drover:running → 200`, // retry: back to ready
		`POST `+base+`/issues/1/labels {"labels":["drover:running"]} → 200`,
		`DELETE `+base+`/issues/1/labels/drover:running → 200`,
		`POST `+base+`/issues/1/labels {"labels":["drover:blocked"]} → 200`,
		`POST `+base+`/issues/1/comments → 201`)
	cs := w.gh.Comments(n)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "gave up") || !strings.Contains(cs[0].Body, "**How to continue:**") || !strings.Contains(cs[0].Body, "drover card resume "+c.Identifier) {
		t.Errorf("give-up comment = %+v", cs)
	}
}

// An invalid-input block: the card's spec does not fit its profile; no
// agent runs, the issue is labelled blocked with the reason.
func TestContractInvalidInput(t *testing.T) {
	w := newWorld(t, "agents", strings.Replace(plannerDefault, "default: sim", "default: planner", 1))
	n := w.issue("Missing plan", `{"sim": ["succeeded"]}`)
	w.syncOK()
	w.calls()
	w.serve()
	c := w.waitState(n, "blocked")
	if rs := w.runs(c); len(rs) != 0 {
		t.Fatalf("invalid input ran %d attempts", len(rs))
	}
	w.project()
	sameCalls(t, "invalid input", w.calls(),
		`POST `+base+`/issues/1/labels {"labels":["drover:blocked"]} → 200`,
		`POST `+base+`/issues/1/comments → 201`)
	if cs := w.gh.Comments(n); len(cs) != 1 || !strings.Contains(cs[0].Body, "plan") {
		t.Errorf("block comment = %+v", cs)
	}
}

const plannerDefault = `default: sim
profiles:
  sim: {kind: sim}
  planner:
    kind: sim
    spec_schema: {type: object, required: [plan], properties: {plan: {type: string}}}`

// A question parked and answered by a comment on the issue.
func TestContractQuestionAnsweredByComment(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Asks a question", `{"sim": ["input_required", "succeeded"], "sim_question": "Which database?", "sim_delay": "10ms"}`)
	w.syncOK()
	w.calls()
	w.serve()
	w.waitState(n, "awaiting_input")
	w.project()
	sameCalls(t, "parked", w.calls(),
		`POST `+base+`/issues/1/labels {"labels":["drover:running"]} → 200`,
		`DELETE `+base+`/issues/1/labels/drover:running → 200`,
		`POST `+base+`/issues/1/labels {"labels":["drover:awaiting-input"]} → 200`,
		`POST `+base+`/issues/1/comments → 201`)
	if cs := w.gh.Comments(n); len(cs) != 1 || !strings.Contains(cs[0].Body, "> Which database?") {
		t.Fatalf("question comment = %+v", cs)
	}
	w.syncOK() // drover's own comment is not an answer
	if c := w.card(n); c.State != "awaiting_input" {
		t.Fatalf("drover's own comment answered the card: %s", c.State)
	}
	w.calls()
	w.gh.PersonComments(n, "alice", "Use PostgreSQL.")
	w.syncOK()
	got := w.calls()
	if len(got) != 2 || !strings.HasPrefix(got[0], "GET "+base+"/issues?direction=asc&per_page=100&since=") || !strings.HasPrefix(got[1], "GET "+base+"/issues/1/comments?per_page=100&since=") {
		t.Fatalf("answer sync calls: %q", got)
	}
	c := w.waitState(n, "review")
	evs, _ := w.st.ListEvents(context.Background(), store.EventFilter{CardID: c.ID})
	answered := false
	for _, e := range evs {
		if e.Type == board.EvAnswered && e.Actor == "tracker:github:alice" && strings.Contains(string(e.Data), "Use PostgreSQL.") {
			answered = true
		}
	}
	if !answered {
		t.Fatalf("no answered event by tracker:github:alice: %+v", evs)
	}
	w.project()
	sameCalls(t, "answered", w.calls(),
		`DELETE `+base+`/issues/1/labels/drover:awaiting-input → 200`,
		`POST `+base+`/issues/1/labels {"labels":["drover:running"]} → 200`,
		`DELETE `+base+`/issues/1/labels/drover:running → 200`,
		`POST `+base+`/issues/1/labels {"labels":["drover:review"]} → 200`)
}

// An operator closes the issue while its agent runs: the run stops and the
// card is cancelled; drover takes its label off and writes nothing else.
func TestContractClosedMidRun(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Long one", `{"sim": ["succeeded"], "sim_delay": "60s"}`)
	w.syncOK()
	w.serve()
	w.waitRunning(n)
	w.project()
	w.calls()
	w.gh.CloseIssue(n)
	w.syncOK()
	got := w.calls()
	if len(got) != 2 || !strings.HasPrefix(got[0], "GET "+base+"/issues?direction=asc&per_page=100&since=") || got[1] != "GET "+base+"/issues/1 → 200" {
		t.Fatalf("sync after close: %q", got)
	}
	c := w.waitState(n, "cancelled")
	rs := w.runs(c)
	if len(rs) != 1 || rs[0].Outcome != board.OutcomeCancelled {
		t.Fatalf("runs after close = %+v", rs)
	}
	w.project()
	sameCalls(t, "closed mid-run", w.calls(), `DELETE `+base+`/issues/1/labels/drover:running → 200`)
}

func (w *world) waitRunning(n int) {
	w.t.Helper()
	for range 2000 {
		c := w.card(n)
		if rs := w.runs(c); c.State == "in_progress" && len(rs) == 1 && rs[0].StartedAt != nil {
			return
		}
		sleep()
	}
	w.t.Fatalf("issue #%d never ran", n)
}

// A give-up made while no projector ran (drover stopped before the row was
// written) is shown after the restart: one move to blocked with its comment.
func TestReconcileAfterARestart(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Keeps failing", `{"sim": ["agent_failed"], "sim_delay": "10ms"}`)
	w.syncOK()
	w.calls()
	w.serve()
	w.waitState(n, "blocked")
	// A new projector, as after a restart, that never saw the events.
	w.proj = &tracker.Projector{Store: w.st, Board: w.proj.Board, Kind: "github"}
	if err := w.proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.project()
	sameCalls(t, "after a restart", w.calls(),
		`POST `+base+`/issues/1/labels {"labels":["drover:blocked"]} → 200`,
		`POST `+base+`/issues/1/comments → 201`)
	if cs := w.gh.Comments(n); len(cs) != 1 || !strings.Contains(cs[0].Body, "gave up") {
		t.Errorf("comments = %+v", cs)
	}
}

// A card blocked long ago whose tracker rows retention pruned is not shown
// again after a restart (its comment would repeat).
func TestReconcileSkipsPrunedHistory(t *testing.T) {
	w := newWorld(t)
	n := w.issue("Keeps failing", `{"sim": ["agent_failed"], "sim_delay": "10ms"}`)
	w.syncOK()
	w.calls()
	w.serve()
	w.waitState(n, "blocked")
	w.proj = &tracker.Projector{Store: w.st, Board: w.proj.Board, Kind: "github",
		Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}
	if err := w.proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.project()
	sameCalls(t, "after a restart, days later", w.calls())
}
