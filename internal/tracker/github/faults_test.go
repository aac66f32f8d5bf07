package github_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/github"
)

// Idle polling of a repository with 500 open issues: after the first full
// listing (five pages), each poll is one request, and every one after the
// first is a 304.
func TestIdlePolling500Issues(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 500; i++ {
		w.issue("issue", `{"sim": ["succeeded"]}`)
	}
	w.syncOK()
	if got := w.calls(); len(got) != 5 {
		t.Fatalf("full listing of 500 issues: %d requests, want 5 pages: %q", len(got), got)
	}
	cards, _ := w.st.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 500 {
		t.Fatalf("%d cards, want 500", len(cards))
	}
	for poll := 1; poll <= 10; poll++ {
		w.syncOK()
		got := w.gh.Log()
		w.gh.ResetLog()
		if len(got) != 1 {
			t.Fatalf("poll %d: %d requests, want 1: %v", poll, len(got), got)
		}
		if poll > 1 && got[0].Status != http.StatusNotModified {
			t.Fatalf("poll %d: %v, want a 304", poll, got[0])
		}
	}
}

// The hourly whole listing is conditional too: an idle repository answers
// it with 304s only.
func TestFullListingIsConditional(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 250; i++ {
		w.issue("issue", `{}`)
	}
	tr, err := github.New(github.Options{Config: w.cfg.Tracker, FullEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := tr.Candidates(ctx); err != nil {
		t.Fatal(err)
	}
	w.gh.ResetLog()
	issues, changed, err := tr.Candidates(ctx)
	if err != nil || changed || len(issues) != 250 {
		t.Fatalf("second whole listing: %d issues, changed %v, err %v", len(issues), changed, err)
	}
	for _, r := range w.gh.Log() {
		if r.Status != http.StatusNotModified {
			t.Errorf("idle whole listing sent %v", r)
		}
	}
	if n := len(w.gh.Log()); n != 3 {
		t.Errorf("%d requests, want 3 pages", n)
	}
}

// A tracker outage of several polls penalises no card, is reported once
// (one error line, one status) and clears when the tracker is back.
func TestOutageReportedOnce(t *testing.T) {
	w := newWorld(t)
	n := w.issue("steady", `{"sim": ["succeeded"], "sim_delay": "60s"}`)
	w.syncOK()
	before := w.card(n)
	w.gh.Down(-1)
	for i := 0; i < 5; i++ {
		err := w.sync.Pass(context.Background())
		if !errors.Is(err, tracker.ErrUnavailable) {
			t.Fatalf("poll %d during the outage: err = %v, want ErrUnavailable", i, err)
		}
	}
	if after := w.card(n); after.Version != before.Version || after.State != before.State {
		t.Fatalf("the outage touched the card: %+v", after)
	}
	if got := strings.Count(w.logs.String(), "tracker unreachable"); got != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", got, w.logs.String())
	}
	w.gh.Up()
	w.syncOK()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.statuses) != 2 || !strings.Contains(w.statuses[0], "503") || w.statuses[1] != "" {
		t.Errorf("statuses = %q, want the outage once, then cleared", w.statuses)
	}
}

// Projections during an outage wait and retry; the card's outcome stands.
func TestProjectionOutageKeepsOutcome(t *testing.T) {
	w := newWorld(t)
	n := w.issue("quick", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	w.syncOK()
	w.gh.Down(-1)
	w.serve()
	w.waitState(n, "review")
	ctx := context.Background()
	w.del.BaseBackoff, w.del.MaxBackoff = time.Minute, time.Minute
	for i := 0; i < 3; i++ {
		if _, err := w.proj.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.del.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c := w.card(n); c.State != "review" {
		t.Fatalf("card moved during the projection outage: %s", c.State)
	}
	rows, _ := w.st.ListOutbox(ctx, store.OutboxFilter{CardID: w.card(n).ID, Pending: store.Bool(true)})
	if len(rows) == 0 || rows[0].LastError == "" {
		t.Fatalf("pending projections = %+v, want ones carrying the error", rows)
	}
	// Waiting rows are out of the due rows the notifier reads too.
	due, _ := w.st.DueOutbox(ctx, time.Now(), 100)
	for _, r := range due {
		if r.Channel == tracker.Channel {
			t.Errorf("a projection is due during the outage (it would crowd notifications): %+v", r)
		}
	}
	if got := strings.Count(w.logs.String(), "tracker unreachable for projections"); got != 1 {
		t.Errorf("projection outage logged %d times, want once", got)
	}
	w.gh.Up()
	w.gh.ResetLog()
	w.del.Now = func() time.Time { return time.Now().Add(5 * time.Minute) } // the backoff has passed
	w.project()
	if got := w.gh.Issue(n); strings.Join(got.Labels, ",") != "drover:review" {
		t.Errorf("after the outage the issue shows %v, want drover:review", got.Labels)
	}
}

// Pull requests are listed by GitHub's issues API; drover never dispatches one.
func TestPullRequestsNeverDispatched(t *testing.T) {
	w := newWorld(t)
	w.gh.AddPullRequest("a PR")
	w.issue("an issue", `{"sim": ["succeeded"]}`)
	w.syncOK()
	cards, _ := w.st.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 1 || cards[0].External.ID != "2" {
		t.Fatalf("cards = %+v, want only issue #2", cards)
	}
}

// required_labels: only issues with every required label become cards;
// the listing asks GitHub for them.
func TestRequiredLabels(t *testing.T) {
	gh := fake.New("acme", "app")
	t.Cleanup(gh.Close)
	w := newWorldOn(t, gh, "tracker", "kind: github\nendpoint: "+gh.URL+"\napi_key: x\nrepo: acme/app\nrequired_labels: [agent]")
	w.issue("without", `{}`)
	n := w.issue("with", `{}`, "agent", "bug")
	w.syncOK()
	got := w.calls()
	if len(got) != 1 || !strings.Contains(got[0], "labels=agent") {
		t.Fatalf("listing = %q", got)
	}
	cards, _ := w.st.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 1 || cards[0].ID != w.card(n).ID || strings.Join(cards[0].Labels, ",") != "agent,bug" {
		t.Fatalf("cards = %+v", cards)
	}
}

// A secondary rate limit defers polling until its retry-after; it is not a
// card's failure and the deferred poll sends nothing.
func TestSecondaryRateLimitDefersPolling(t *testing.T) {
	w := newWorld(t)
	n := w.issue("x", `{}`)
	w.syncOK()
	before := w.card(n)
	w.calls()
	w.gh.SecondaryRateLimit(1, 120)
	err := w.sync.Pass(context.Background())
	var rl *tracker.RateLimitError
	if !errors.As(err, &rl) || !rl.Secondary {
		t.Fatalf("err = %v, want a secondary RateLimitError", err)
	}
	if d := time.Until(w.sync.Deferred()); d < 100*time.Second || d > 121*time.Second {
		t.Fatalf("deferred for %v, want ~120s", d)
	}
	w.calls()
	if err := w.sync.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := w.calls(); len(got) != 0 {
		t.Fatalf("a deferred poll sent %q", got)
	}
	if c := w.card(n); c.Version != before.Version {
		t.Fatal("the rate limit touched the card")
	}
}

// A primary rate limit (x-ratelimit-remaining: 0) waits for the reset time.
func TestPrimaryRateLimit(t *testing.T) {
	w := newWorld(t)
	reset := time.Now().Add(30 * time.Minute).Unix()
	w.gh.Inject(fake.Fault{Status: http.StatusForbidden, Times: 1, Body: `{"message":"API rate limit exceeded for user ID 1."}`,
		Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {itoa(reset)}}})
	var rl *tracker.RateLimitError
	if err := w.sync.Pass(context.Background()); !errors.As(err, &rl) || rl.Secondary || rl.Until.Unix() != reset {
		t.Fatalf("err = %v, want a primary limit until %d", err, reset)
	}
}

// A body that is not what GitHub documents is an outage, never an empty
// list: no card is cancelled for it.
func TestMalformedBodyIsNotEmpty(t *testing.T) {
	w := newWorld(t)
	n := w.issue("x", `{}`)
	w.syncOK()
	w.gh.Inject(fake.Fault{Status: http.StatusOK, Body: `[{"number": "not a number"`, Times: 1})
	if err := w.sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	// A failed refresh is an error, not "gone".
	w.gh.CloseIssue(n)
	w.gh.Inject(fake.Fault{Match: func(r fake.Route) bool { return r.Path == base+"/issues/1" }, Status: http.StatusBadGateway, Times: 1})
	if err := w.sync.Pass(context.Background()); !errors.Is(err, tracker.ErrUnavailable) {
		t.Fatalf("refresh during a 502: err = %v", err)
	}
	if c := w.card(n); c.State != "ready" {
		t.Fatalf("card %s after a failed refresh, want ready", c.State)
	}
	w.syncOK()
	if c := w.card(n); c.State != "cancelled" {
		t.Fatalf("card %s after the close was read, want cancelled", c.State)
	}
}

// A refused transition (GitHub will not set the blocked label) leaves the
// card blocked in drover, never claimed again, and says so.
func TestRefusedTransitionLeavesCardBlocked(t *testing.T) {
	w := newWorld(t, "agents", strings.Replace(plannerDefault, "default: sim", "default: planner", 1))
	w.gh.RefuseLabel("drover:blocked")
	n := w.issue("Missing plan", `{}`)
	w.syncOK()
	w.calls()
	w.serve()
	c := w.waitState(n, "blocked")
	w.project()
	got := w.calls()
	if len(got) != 1 || !strings.Contains(got[0], "drover:blocked") || !strings.HasSuffix(got[0], "→ 422") {
		t.Fatalf("calls = %q, want the one refused label write", got)
	}
	rows, _ := w.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	if len(rows) != 1 || !rows[0].Dead || !strings.HasPrefix(rows[0].LastError, "refused:") {
		t.Fatalf("outbox = %+v, want one dead refused row", rows)
	}
	time.Sleep(300 * time.Millisecond) // several dispatcher ticks
	if after := w.card(n); after.State != "blocked" || len(w.runs(after)) != 0 {
		t.Fatalf("after the refusal the card is %s with %d runs", after.State, len(w.runs(after)))
	}
	evs, _ := w.st.ListEvents(context.Background(), store.EventFilter{CardID: c.ID})
	if evs[len(evs)-1].Type != tracker.EvRefused {
		t.Errorf("last event = %s, want %s", evs[len(evs)-1].Type, tracker.EvRefused)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.refused) != 1 {
		t.Errorf("refusals reported: %q", w.refused)
	}
}

// Check creates a role label that does not exist, and names the key when
// the token may not create it.
func TestCheckLabels(t *testing.T) {
	gh := fake.New("acme", "app")
	t.Cleanup(gh.Close)
	newWorldOn(t, gh)
	for _, l := range []string{"drover:running", "drover:awaiting-input", "drover:review", "drover:blocked"} {
		if !gh.HasLabel(l) {
			t.Errorf("Check did not create %s", l)
		}
	}
	gh2 := fake.New("acme", "app")
	t.Cleanup(gh2.Close)
	gh2.Inject(fake.Fault{Match: func(r fake.Route) bool { return r.Method == "POST" && r.Path == base+"/labels" }, Status: http.StatusForbidden,
		Body: `{"message":"Resource not accessible by personal access token"}`, Times: 1})
	w := workflow(gh2).Config(t, t.TempDir())
	tr := newTracker(t, w.Tracker)
	err := tr.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "tracker.roles.running.label") || !strings.Contains(err.Error(), "drover:running") {
		t.Fatalf("Check = %v, want the key and label named", err)
	}
	if !strings.Contains(tr2Err(t, gh2), "tracker.repo") {
		t.Error("a missing repository does not name tracker.repo")
	}
}

func tr2Err(t *testing.T, gh *fake.Server) string {
	cfg := workflow(gh).Set("tracker", "kind: github\nendpoint: "+gh.URL+"\napi_key: x\nrepo: acme/missing").Config(t, t.TempDir())
	err := newTracker(t, cfg.Tracker).Check(context.Background())
	if err == nil {
		return ""
	}
	return err.Error()
}

// A blocker written "blocked by #N" holds the card until the blocker's
// card is done.
func TestBlockedByConvention(t *testing.T) {
	w := newWorld(t)
	a := w.issue("first", `{}`)
	b := w.gh.AddIssue("second", "Blocked by #1, as agreed.")
	w.syncOK()
	cb := w.card(b)
	if len(cb.BlockedBy) != 1 || cb.BlockedBy[0] != w.card(a).ID {
		t.Fatalf("blocked_by = %v, want the card of #1", cb.BlockedBy)
	}
	_ = board.RoleDone
}

// GitHub's issue dependencies, where the repository has them, are blockers
// too (read only for an issue whose summary counts any).
func TestIssueDependencies(t *testing.T) {
	w := newWorld(t)
	a := w.issue("first", `{}`)
	b := w.issue("second", `{}`)
	w.gh.DependsOn(b, a)
	w.syncOK()
	got := w.calls()
	if len(got) != 2 || !strings.Contains(got[1], "/issues/2/dependencies/blocked_by") {
		t.Fatalf("calls = %q, want the listing and #2's dependencies", got)
	}
	if cb := w.card(b); len(cb.BlockedBy) != 1 || cb.BlockedBy[0] != w.card(a).ID {
		t.Fatalf("blocked_by = %v", cb.BlockedBy)
	}
}
