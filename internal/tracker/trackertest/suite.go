package trackertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/tracker"
)

// Run runs the conformance suite against kit: what a tracker's user
// observes, in the tracker and on drover's board. Each test has a world
// of its own.
func Run(t *testing.T, kit Kit) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, kit Kit)
	}{
		{"IssuesMirroredAsCards", testMirrored},
		{"EditsFollowTheIssue", testEdits},
		{"BlockersHoldTheCard", testBlockers},
		{"EveryPageRead", testPages},
		{"SuccessShown", testSuccess},
		{"PullMergedShownDone", testPullMerged},
		{"PullClosedShownBlocked", testPullClosed},
		{"GiveUpShownWithComment", testGiveUp},
		{"InvalidInputBlocked", testInvalidInput},
		{"QuestionAnsweredByComment", testQuestion},
		{"ClosedMidRunCancels", testClosedMidRun},
		{"OutageTouchesNoCard", testOutage},
		{"MalformedAnswerIsNotEmpty", testMalformed},
		{"RateLimitDefersPolling", testRateLimit},
		{"RefusedWriteLeavesTheCard", testRefused},
		{"ProjectionOutageKeepsOutcome", testProjectionOutage},
		{"ReconcileAfterARestart", testReconcile},
		{"ReconcileSkipsPrunedHistory", testReconcilePruned},
		{"HostileAnswerStopsNothing", testHostileAnswer},
		{"UnusableAnswerSkippedWithItsReason", testUnusableAnswer},
		{"TrackerFailingForOneIssueHoldsOnlyIt", testTrackerFailsForOneIssue},
		{"UnreadableIssueHoldsOnlyItsCard", testUnreadableIssue},
		{"FailedPassIsATrackerError", testFailedPassShows},
		{"ProjectionFailingForOneCardHoldsOnlyIt", testProjectionOfOneCardFails},
		{"HostileIssueChangesNothingElse", testHostileIssueProperty},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, kit) })
	}
}

// An issue becomes a ready card with its title, its spec, its labels and a
// link back; what drover must not dispatch does not.
func testMirrored(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("Fix the login redirect", `{"sim": ["succeeded"]}`, "bug", "backend")
	w.Fake.AddIgnored("Not for drover")
	w.SyncOK()
	w.Calls("first sync")
	cs := w.Cards()
	if len(cs) != 1 {
		t.Fatalf("%d cards, want one for the one candidate issue: %+v", len(cs), cs)
	}
	c := w.Card(id)
	if c.State != "ready" || c.Title != "Fix the login redirect" || string(c.Spec) != `{"sim":["succeeded"]}` ||
		strings.Join(c.Labels, ",") != "bug,backend" {
		t.Errorf("card %+v, want ready with the issue's title, spec and labels", c)
	}
	if e := c.External; e == nil || e.Tracker != kit.Kind || e.ID != id || e.Key == "" || !strings.HasPrefix(e.URL, "https://") {
		t.Errorf("link %+v, want %s issue %s with its key and URL", c.External, kit.Kind, id)
	}
	if evs := w.Events(c); len(evs) == 0 || evs[0].Type != board.EvCreated || evs[0].Actor != "tracker:"+kit.Kind {
		t.Errorf("events %+v, want the card created by tracker:%s", evs, kit.Kind)
	}
}

// A person's edit of the issue is copied onto its unclaimed card.
func testEdits(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("First title", `{"sim": ["succeeded"]}`)
	w.SyncOK()
	before := w.Card(id)
	w.Fake.Edit(id, "Second title", "Now with a plan.\n\n```drover\n{\"sim\": [\"succeeded\"], \"plan\": \"x\"}\n```\n")
	w.SyncOK()
	c := w.Card(id)
	if c.Title != "Second title" || string(c.Spec) != `{"sim":["succeeded"],"plan":"x"}` || c.RetryEpoch != before.RetryEpoch+1 {
		t.Errorf("card after the edit: title %q spec %s epoch %d, want the new title and spec in a new retry epoch", c.Title, c.Spec, c.RetryEpoch)
	}
	if evs := w.Events(c); evs[len(evs)-1].Type != board.EvEdited {
		t.Errorf("last event %s, want %s", evs[len(evs)-1].Type, board.EvEdited)
	}
}

// An issue blocked by another in the tracker is blocked by its card: it
// runs once its blocker is done (its issue closed after review).
func testBlockers(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	a := w.Issue("first", `{"sim": ["succeeded"], "sim_delay": "200ms"}`)
	b := w.Issue("second", `{"sim": ["succeeded"]}`)
	w.Fake.Block(b, a)
	w.SyncOK()
	cb := w.Card(b)
	if len(cb.BlockedBy) != 1 || cb.BlockedBy[0] != w.Card(a).ID {
		t.Fatalf("blocked_by %v, want the card of issue %s", cb.BlockedBy, a)
	}
	w.Serve()
	w.WaitState(a, "review")
	time.Sleep(200 * time.Millisecond) // ticks in which the blocked card must not start
	if c := w.Card(b); c.State != "ready" || len(w.Runs(c)) != 0 {
		t.Fatalf("the blocked card is %s with %d runs while its blocker is in review, want ready with none", c.State, len(w.Runs(c)))
	}
	w.Fake.Close(a)
	w.SyncOK()
	w.WaitState(a, "done")
	w.WaitState(b, "review")
}

// Issues over several pages all become cards.
func testPages(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	for i := range 120 {
		w.Issue(fmt.Sprint("issue ", i), `{}`)
	}
	w.SyncOK()
	if n := len(w.Cards()); n != 120 {
		t.Fatalf("%d cards, want 120", n)
	}
	w.Calls("120 issues")
}

// A clean success: the issue shows drover working while the agent runs,
// then review; drover's own marks coming back are not an edit.
func testSuccess(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("Fix it", `{"sim": ["succeeded"], "sim_delay": "1s"}`)
	w.SyncOK()
	w.Calls("first sync")
	w.Serve()
	w.WaitRunning(id)
	w.Project()
	w.Shows(id, board.RoleRunning)
	c := w.WaitState(id, "review")
	w.Project()
	w.Calls("success")
	w.Shows(id, board.RoleCompleted)
	if cs := w.Fake.Comments(id); len(cs) != 0 {
		t.Errorf("comments on a success: %q, want none", cs)
	}
	w.SyncOK()
	for _, e := range w.Events(c) {
		if e.Type == board.EvEdited {
			t.Errorf("drover's own write came back as an edit: %+v", e)
		}
	}
	if got := w.Card(id); len(got.Labels) != 0 || got.Version != c.Version {
		t.Errorf("card after the next sync: labels %v, version %d, want none and %d", got.Labels, got.Version, c.Version)
	}
}

// A give-up: every attempt fails; the issue shows blocked with a comment
// that says what, where and how to continue.
func testGiveUp(t *testing.T, kit Kit) {
	w, id, c := givenUp(t, kit)
	shownBlocked(w, "give-up", id, "gave up", "**How to continue:**", "drover card resume "+c.Identifier)
}

// givenUp is a world whose one issue's card gave up: every attempt
// failed, it is blocked, and nothing is projected yet.
func givenUp(t *testing.T, kit Kit) (*World, string, board.Card) {
	w := NewWorld(t, kit)
	id := w.Issue("Keeps failing", `{"sim": ["agent_failed"], "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Calls("")
	w.Serve()
	c := w.WaitState(id, "blocked")
	if c.GaveUp == nil {
		t.Fatalf("card blocked without a give-up: %+v", c)
	}
	return w, id, c
}

// shownBlocked projects what is due (the kit's requests at step) and
// checks that issue id shows blocked, with one signed comment that says
// each of want.
func shownBlocked(w *World, step, id string, want ...string) {
	w.T.Helper()
	w.Project()
	w.Calls(step)
	w.Shows(id, board.RoleBlocked)
	cs := w.Fake.Comments(id)
	ok := len(cs) == 1 && tracker.Mine(cs[0])
	for _, s := range want {
		ok = ok && strings.Contains(cs[0], s)
	}
	if !ok {
		w.T.Errorf("comments %q, want one signed comment saying %q", cs, want)
	}
}

// A card whose input does not fit its profile is blocked before any agent
// runs; the issue says why.
func testInvalidInput(t *testing.T, kit Kit) {
	w := NewWorld(t, kit, "agents", strings.Replace(testkit.PlannerAgents, "default: sim", "default: planner", 1))
	id := w.Issue("Missing plan", `{"sim": ["succeeded"]}`)
	w.SyncOK()
	w.Calls("")
	w.Serve()
	c := w.WaitState(id, "blocked")
	if rs := w.Runs(c); len(rs) != 0 {
		t.Fatalf("invalid input ran %d attempts", len(rs))
	}
	shownBlocked(w, "invalid input", id, "plan")
}

// A question is asked on the issue; drover's own comment is not an
// answer, a person's is, and the card goes on with it.
func testQuestion(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("Asks a question", `{"sim": ["input_required", "succeeded"], "sim_question": "Which database?", "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Calls("")
	w.Serve()
	w.WaitState(id, "awaiting_input")
	w.Project()
	w.Calls("parked")
	w.Shows(id, board.RoleParked)
	if cs := w.Fake.Comments(id); len(cs) != 1 || !strings.Contains(cs[0], "> Which database?") {
		t.Fatalf("comments %q, want the question quoted", cs)
	}
	w.SyncOK()
	if c := w.Card(id); c.State != "awaiting_input" {
		t.Fatalf("drover's own comment answered the card: %s", c.State)
	}
	w.Calls("")
	w.Fake.PersonComments(id, "alice", "Use PostgreSQL.")
	w.SyncOK()
	w.Calls("answer sync")
	c := w.WaitState(id, "review")
	answered := false
	for _, e := range w.Events(c) {
		if e.Type == board.EvAnswered && e.Actor == "tracker:"+kit.Kind+":alice" && strings.Contains(string(e.Data), "Use PostgreSQL.") {
			answered = true
		}
	}
	if !answered {
		t.Errorf("no answered event by tracker:%s:alice with the answer: %+v", kit.Kind, w.Events(c))
	}
	w.Project()
	w.Calls("answered")
	w.Shows(id, board.RoleCompleted)
}

// A person closes the issue while its agent runs: the run stops and the
// card is cancelled; the issue no longer shows drover working.
func testClosedMidRun(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("Long one", `{"sim": ["succeeded"], "sim_delay": "60s"}`)
	w.SyncOK()
	w.Serve()
	w.WaitRunning(id)
	w.Project()
	w.Calls("")
	w.Fake.Close(id)
	w.SyncOK()
	w.Calls("sync after close")
	c := w.WaitState(id, "cancelled")
	if rs := w.Runs(c); len(rs) != 1 || rs[0].Outcome != board.OutcomeCancelled {
		t.Fatalf("runs after the close %+v, want the one run cancelled", rs)
	}
	w.Project()
	w.Calls("closed mid-run")
	if running, ok := w.Shown(board.RoleRunning); ok && w.Fake.Shows(id) == running {
		t.Errorf("the closed issue still shows %q", running)
	}
}

// An outage of several polls touches no card, is reported once (one log
// line, one status) and clears when the tracker is back.
func testOutage(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("steady", `{}`)
	w.SyncOK()
	before := w.Card(id)
	w.Fake.Down()
	for i := range 3 {
		if err := w.Sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
			t.Fatalf("poll %d during the outage: %v, want ErrUnavailable", i, err)
		}
	}
	if c := w.Card(id); c.Version != before.Version {
		t.Fatalf("the outage touched the card: %+v", c)
	}
	if n := w.Logs.Count("tracker unreachable"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, w.Logs)
	}
	w.Fake.Up()
	w.SyncOK()
	if st := w.Statuses(); len(st) != 2 || !strings.HasPrefix(st[0], kit.Kind+": ") || st[1] != "" {
		t.Errorf("statuses %q, want the outage once, then cleared", st)
	}
}

// An answer that is not what the API documents is an outage, never an
// empty list: no card is cancelled for it.
func testMalformed(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("x", `{}`)
	w.SyncOK()
	w.Fake.Malformed()
	if err := w.Sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
		t.Fatalf("malformed answer: %v, want ErrUnavailable", err)
	}
	if c := w.Card(id); c.State != "ready" {
		t.Fatalf("card %s after a malformed answer, want ready", c.State)
	}
}

// A rate limit defers polling until it lifts; it is no card's failure and
// the deferred poll sends nothing.
func testRateLimit(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("x", `{}`)
	w.SyncOK()
	before := w.Card(id)
	until := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	w.Fake.RateLimit(until)
	var rl *tracker.RateLimitError
	if err := w.Sync.Pass(context.Background()); !errors.As(err, &rl) || rl.Until.Sub(until).Abs() > time.Second {
		t.Fatalf("err %v, want a rate limit until %s", err, until)
	}
	if d := w.Sync.Deferred(); d.Sub(until).Abs() > time.Second {
		t.Errorf("polling deferred until %s, want %s", d, until)
	}
	w.Calls("")
	w.SyncOK()
	if got := w.Calls(""); len(got) != 0 {
		t.Errorf("a deferred poll sent %q", got)
	}
	if c := w.Card(id); c.Version != before.Version {
		t.Error("the rate limit touched the card")
	}
}

// A write the tracker refuses leaves the card where drover put it, never
// claimed again, and says so on the card and to the operator.
func testRefused(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	shown, ok := w.Shown(board.RoleCompleted)
	if !ok {
		t.Fatalf("tracker.roles shows no %s", board.RoleCompleted)
	}
	w.Fake.Refuse(shown)
	id := w.Issue("x", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Serve()
	c := w.WaitState(id, "review")
	w.Project()
	var dead int
	rows, _ := w.Store.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	for _, r := range rows {
		if r.Dead && strings.HasPrefix(r.LastError, "refused:") {
			dead++
		}
	}
	if dead != 1 {
		t.Errorf("outbox %+v, want one row dead as refused", rows)
	}
	time.Sleep(300 * time.Millisecond) // several dispatcher ticks
	after := w.Card(id)
	if after.State != "review" || len(w.Runs(after)) != 1 {
		t.Errorf("after the refusal the card is %s with %d runs, want review with its one", after.State, len(w.Runs(after)))
	}
	if evs := w.Events(after); evs[len(evs)-1].Type != tracker.EvRefused {
		t.Errorf("last event %s, want %s", evs[len(evs)-1].Type, tracker.EvRefused)
	}
	if r := w.Refused(); len(r) != 1 {
		t.Errorf("refusals reported %q, want one", r)
	}
}

// Projections during an outage wait and retry, out of the notifier's way;
// the card's outcome stands and the issue catches up.
func testProjectionOutage(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	id := w.Issue("quick", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Fake.Down()
	w.Serve()
	w.WaitState(id, "review")
	ctx := context.Background()
	w.Del.BaseBackoff, w.Del.MaxBackoff = time.Minute, time.Minute
	for range 3 {
		if _, err := w.Proj.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Del.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c := w.Card(id)
	if c.State != "review" {
		t.Fatalf("card moved during the projection outage: %s", c.State)
	}
	rows, _ := w.Store.ListOutbox(ctx, store.OutboxFilter{CardID: c.ID, Pending: store.Bool(true)})
	if len(rows) == 0 || rows[0].LastError == "" {
		t.Fatalf("pending projections %+v, want ones carrying the error", rows)
	}
	due, _ := w.Store.DueOutbox(ctx, time.Now(), 100)
	if slices.ContainsFunc(due, func(r store.OutboxItem) bool { return r.Channel == tracker.Channel }) {
		t.Errorf("a projection is due during the outage (it would crowd notifications): %+v", due)
	}
	if n := w.Logs.Count("tracker unreachable for projections"); n != 1 {
		t.Errorf("the projection outage was logged %d times, want once", n)
	}
	w.Fake.Up()
	w.Del.Now = func() time.Time { return time.Now().Add(5 * time.Minute) } // the backoff has passed
	w.Project()
	w.Shows(id, board.RoleCompleted)
}

// A give-up made while no projector ran (drover stopped before the row was
// written) is shown after the restart: one move to blocked, its comment.
func testReconcile(t *testing.T, kit Kit) {
	w, id, _ := givenUp(t, kit)
	w.Proj = &tracker.Projector{Store: w.Store, Board: w.Proj.Board, Kind: kit.Kind}
	if err := w.Proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	shownBlocked(w, "after a restart", id, "gave up")
}

// A card blocked long ago whose projection rows retention pruned is not
// shown again after a restart (its comment would repeat).
func testReconcilePruned(t *testing.T, kit Kit) {
	w, id, _ := givenUp(t, kit)
	w.Proj = &tracker.Projector{Store: w.Store, Board: w.Proj.Board, Kind: kit.Kind,
		Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}
	if err := w.Proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Project()
	if got := w.Calls(""); len(got) != 0 {
		t.Errorf("after a restart, days later: %q, want no request", got)
	}
	if cs := w.Fake.Comments(id); len(cs) != 0 {
		t.Errorf("comments %q, want none", cs)
	}
}
