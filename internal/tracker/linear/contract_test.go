package linear_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/linear"
)

type world struct {
	t    *testing.T
	ln   *fake.Server
	st   store.Store
	cfg  *config.Config
	sync *tracker.Syncer
	proj *tracker.Projector
	del  *tracker.Deliverer
	logs *strings.Builder
}

func newWorld(t *testing.T, trackerYAML string) *world {
	t.Helper()
	ln := fake.New("eng-project-1a2b")
	ln.APIKey = "lin_api_test"
	t.Cleanup(ln.Close)
	t.Setenv("LINEAR_API_KEY", "lin_api_test")
	if trackerYAML == "" {
		trackerYAML = "kind: linear\nprovider: {project_slug: eng-project-1a2b}\nactive_states: [Todo, In Progress]"
	}
	cfg := testkit.NewWorkflow().
		Set("policy", "max_attempts: 2\nbackoff: {base: 20ms, max: 50ms, jitter: 0}").
		Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms}").
		Set("tracker", trackerYAML+"\nendpoint: "+ln.URL).Config(t, t.TempDir())
	st := testkit.Store(t, testkit.SQLite)
	tr := linear.New(linear.Options{Config: cfg.Tracker})
	if err := tr.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	w := &world{t: t, ln: ln, st: st, cfg: cfg, logs: &strings.Builder{}}
	log := slog.New(slog.NewTextHandler(w.logs, nil))
	b := func() board.Board { return cfg.Board }
	w.sync = &tracker.Syncer{Store: st, Tracker: tr, Board: b, Log: log}
	w.proj = &tracker.Projector{Store: st, Board: b, Kind: "linear", Log: log}
	w.del = &tracker.Deliverer{Store: st, Tracker: tr, Log: log, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	if err := w.proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln.ResetLog()
	return w
}

func (w *world) serve() {
	d, err := dispatch.New(dispatch.Options{Store: w.st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.t.TempDir(), "logs")})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	w.t.Cleanup(func() { cancel(); <-done })
}

func (w *world) syncOK() {
	w.t.Helper()
	if err := w.sync.Pass(context.Background()); err != nil {
		w.t.Fatalf("sync: %v", err)
	}
}

func (w *world) project() {
	w.t.Helper()
	ctx := context.Background()
	for range 50 {
		if _, err := w.proj.Pass(ctx); err != nil {
			w.t.Fatal(err)
		}
		if _, _, err := w.del.Tick(ctx); err != nil {
			w.t.Fatal(err)
		}
		rows, _ := w.st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true)})
		if len(rows) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatal("projections still pending")
}

func (w *world) card(id string) board.Card {
	w.t.Helper()
	cs, err := w.st.ListCards(context.Background(), store.CardFilter{External: "linear:" + id})
	if err != nil || len(cs) != 1 {
		w.t.Fatalf("card of %s: %v (%d)", id, err, len(cs))
	}
	return cs[0]
}

func (w *world) waitState(id, state string) board.Card {
	w.t.Helper()
	for range 2000 {
		if c := w.card(id); c.State == state && c.Claim == nil {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.t.Fatalf("%s never reached %s (now %s)", id, state, w.card(id).State)
	return board.Card{}
}

// ops is the fake's log as "Operation(key variables)".
func (w *world) ops() []string {
	var out []string
	for _, r := range w.ln.Log() {
		s := r.Op
		switch r.Op {
		case "DroverMove":
			s += fmt.Sprintf("(%v→%v)", r.Vars["id"], r.Vars["stateId"])
		case "DroverComment":
			s += fmt.Sprintf("(%v)", r.Vars["issueId"])
		}
		out = append(out, fmt.Sprintf("%s %d", s, r.Status))
	}
	w.ln.ResetLog()
	return out
}

func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

func spec(s string) string { return "Do it.\n\n```drover\n" + s + "\n```" }

// Success: Todo → In Progress → In Review (state-3 and state-4 of the fake).
func TestLinearSuccess(t *testing.T) {
	w := newWorld(t, "")
	id := w.ln.AddIssue("Fix it", spec(`{"sim":["succeeded"],"sim_delay":"50ms"}`), "Todo")
	w.ln.AddIssue("Not active", "", "Backlog")
	w.syncOK()
	same(t, "sync", w.ops(), "DroverCandidates 200")
	c := w.card(id)
	if c.External.Key != "ENG-1" || c.External.URL == "" {
		t.Fatalf("link = %+v", c.External)
	}
	w.serve()
	w.waitState(id, "review")
	w.project()
	same(t, "success", w.ops(), "DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-4) 200")
	if got := w.ln.Issue(id).State; got != "In Review" {
		t.Errorf("issue state = %s", got)
	}
}

// A give-up: the comment carries the reason; blocked has no state by
// default, so no move but the comment.
func TestLinearGiveUp(t *testing.T) {
	w := newWorld(t, "kind: linear\nproject_slug: eng-project-1a2b\nactive_states: [Todo, In Progress]\nroles: {blocked: {state: Todo}}")
	id := w.ln.AddIssue("Fails", spec(`{"sim":["agent_failed"],"sim_delay":"10ms"}`), "Todo")
	w.syncOK()
	w.ops()
	w.serve()
	w.waitState(id, "blocked")
	w.project()
	same(t, "give-up", w.ops(), "DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-3) 200",
		"DroverMove(issue-0001→state-2) 200", "DroverComment(issue-0001) 200")
	if cs := w.ln.Comments(id); len(cs) != 1 || !strings.Contains(cs[0].Body, "gave up") {
		t.Errorf("comments = %+v", cs)
	}
}

// A question parked, answered by a comment in Linear.
func TestLinearQuestionAnswered(t *testing.T) {
	w := newWorld(t, "")
	id := w.ln.AddIssue("Asks", spec(`{"sim":["input_required","succeeded"],"sim_question":"Which team?","sim_delay":"10ms"}`), "Todo")
	w.syncOK()
	w.serve()
	w.waitState(id, "awaiting_input")
	w.project()
	w.ops()
	w.ln.PersonComments(id, "Ada", "The platform team.")
	w.syncOK()
	same(t, "answer sync", w.ops(), "DroverCandidates 200", "DroverComments 200")
	w.waitState(id, "review")
}

// Closing the issue mid-run (a terminal state) stops the run.
func TestLinearClosedMidRun(t *testing.T) {
	w := newWorld(t, "")
	id := w.ln.AddIssue("Long", spec(`{"sim":["succeeded"],"sim_delay":"60s"}`), "Todo")
	w.syncOK()
	w.serve()
	for range 1000 {
		if c := w.card(id); c.State == "in_progress" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	w.ln.SetState(id, "Canceled")
	w.ops()
	w.syncOK()
	same(t, "sync after cancel", w.ops(), "DroverCandidates 200", "DroverIssuesByID 200")
	w.waitState(id, "cancelled")
}

// An outage or a rate limit touches no card; a refused transition leaves
// the card where drover put it.
func TestLinearFaults(t *testing.T) {
	w := newWorld(t, "")
	id := w.ln.AddIssue("x", spec(`{"sim":["succeeded"],"sim_delay":"10ms"}`), "Todo")
	w.syncOK()
	before := w.card(id)
	w.ln.Inject(fake.Fault{Status: 502, Body: "bad gateway", Times: 2})
	for range 2 {
		if err := w.sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	}
	w.ln.Inject(fake.Fault{Status: 200, Body: `{"data": {"issues": `, Times: 1})
	if err := w.sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
		t.Fatalf("malformed answer: err = %v, want ErrUnavailable", err)
	}
	w.ln.RateLimit(1, time.Now().Add(time.Hour))
	var rl *tracker.RateLimitError
	if err := w.sync.Pass(context.Background()); !errors.As(err, &rl) || time.Until(rl.Until) < 50*time.Minute {
		t.Fatalf("err = %v, want a rate limit for an hour", err)
	}
	if c := w.card(id); c.Version != before.Version {
		t.Fatal("faults touched the card")
	}
	if n := strings.Count(w.logs.String(), "tracker unreachable"); n != 1 {
		t.Errorf("outage reported %d times", n)
	}
	w.ln.RefuseState("In Review")
	w.serve()
	w.waitState(id, "review")
	w.project()
	rows, _ := w.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: before.ID})
	dead := 0
	for _, r := range rows {
		if r.Dead && strings.HasPrefix(r.LastError, "refused:") {
			dead++
		}
	}
	if dead != 1 || w.card(id).State != "review" {
		t.Errorf("refused move: %d dead rows, card %s", dead, w.card(id).State)
	}
}

// Pagination: 120 issues come in three pages; blockers come from "blocks"
// relations.
func TestLinearPaginationAndBlockers(t *testing.T) {
	w := newWorld(t, "")
	var ids []string
	for i := range 120 {
		ids = append(ids, w.ln.AddIssue(fmt.Sprint("issue ", i), "", "Todo"))
	}
	w.ln.Block(ids[1], ids[0])
	w.syncOK()
	if got := w.ops(); len(got) != 3 {
		t.Fatalf("pages = %q", got)
	}
	if b := w.card(ids[1]).BlockedBy; len(b) != 1 || b[0] != w.card(ids[0]).ID {
		t.Fatalf("blocked_by = %v", b)
	}
}
