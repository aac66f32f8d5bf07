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
	"github.com/drover-dev/drover/internal/tracker/trackertest"
)

// Idle polling of a repository with 500 open issues: after the first full
// listing (five pages), each poll is one request, and every one after the
// first is a 304.
func TestIdlePolling500Issues(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 500; i++ {
		w.issue("issue", `{"sim": ["succeeded"]}`)
	}
	w.SyncOK()
	if got := w.Fake.Calls(); len(got) != 5 {
		t.Fatalf("full listing of 500 issues: %d requests, want 5 pages: %q", len(got), got)
	}
	cards, _ := w.Store.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 500 {
		t.Fatalf("%d cards, want 500", len(cards))
	}
	for poll := 1; poll <= 10; poll++ {
		w.SyncOK()
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
	tr, err := github.New(github.Options{Config: w.Cfg.Tracker, FullEvery: time.Nanosecond})
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

// required_labels: only issues with every required label become cards;
// the listing asks GitHub for them.
func TestRequiredLabels(t *testing.T) {
	gh := fake.New("acme", "app")
	t.Cleanup(gh.Close)
	w := newWorldOn(t, gh, "tracker", "kind: github\nendpoint: "+gh.URL+"\napi_key: x\nrepo: acme/app\nrequired_labels: [agent]")
	w.issue("without", `{}`)
	n := w.issue("with", `{}`, "agent", "bug")
	w.SyncOK()
	got := w.Fake.Calls()
	if len(got) != 1 || !strings.Contains(got[0], "labels=agent") {
		t.Fatalf("listing = %q", got)
	}
	cards, _ := w.Store.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 1 || cards[0].ID != w.card(n).ID || strings.Join(cards[0].Labels, ",") != "agent,bug" {
		t.Fatalf("cards = %+v", cards)
	}
}

// A secondary rate limit (403 with retry-after) defers polling for its
// retry-after.
func TestSecondaryRateLimitDefersPolling(t *testing.T) {
	w := newWorld(t)
	w.issue("x", `{}`)
	w.SyncOK()
	w.gh.SecondaryRateLimit(1, 120)
	err := w.Sync.Pass(context.Background())
	var rl *tracker.RateLimitError
	if !errors.As(err, &rl) || !rl.Secondary {
		t.Fatalf("err = %v, want a secondary RateLimitError", err)
	}
	if d := time.Until(w.Sync.Deferred()); d < 100*time.Second || d > 121*time.Second {
		t.Fatalf("deferred for %v, want ~120s", d)
	}
}

// A refresh that fails is never "gone": the card of the closed issue is
// cancelled only once the close is read. The tracker failing for one
// issue is that issue's trouble: the pass goes on, the issue is named in
// the sync's faults, and the next poll reads it again.
func TestFailedRefreshIsNotGone(t *testing.T) {
	w := newWorld(t)
	n := w.issue("x", `{}`)
	w.SyncOK()
	w.gh.CloseIssue(n)
	w.gh.Inject(fake.Fault{Match: func(r fake.Route) bool { return r.Path == base+"/issues/1" }, Status: http.StatusBadGateway, Times: 1})
	w.SyncOK()
	if c := w.card(n); c.State != "ready" {
		t.Fatalf("card %s after a failed refresh, want ready", c.State)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 1 || fs[0].Issue != "acme/app#1" || fs[0].Stage != "refresh" || !strings.Contains(fs[0].Reason, "502") {
		t.Fatalf("faults %+v, want the issue's failed refresh", fs)
	}
	w.SyncOK()
	if c := w.card(n); c.State != "cancelled" {
		t.Fatalf("card %s after the close was read, want cancelled", c.State)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 0 {
		t.Fatalf("faults %+v after the issue was read, want none", fs)
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
	cfg := trackertest.Workflow(section(gh2)).Config(t, t.TempDir())
	tr := newTracker(t, cfg.Tracker)
	err := tr.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "tracker.roles.running.label") || !strings.Contains(err.Error(), "drover:running") {
		t.Fatalf("Check = %v, want the key and label named", err)
	}
	if !strings.Contains(tr2Err(t, gh2), "tracker.repo") {
		t.Error("a missing repository does not name tracker.repo")
	}
}

func tr2Err(t *testing.T, gh *fake.Server) string {
	cfg := trackertest.Workflow("kind: github\nendpoint: "+gh.URL+"\napi_key: x\nrepo: acme/missing").Config(t, t.TempDir())
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
	w.SyncOK()
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
	w.SyncOK()
	got := w.Fake.Calls()
	if len(got) != 2 || !strings.Contains(got[1], "/issues/2/dependencies/blocked_by") {
		t.Fatalf("calls = %q, want the listing and #2's dependencies", got)
	}
	if cb := w.card(b); len(cb.BlockedBy) != 1 || cb.BlockedBy[0] != w.card(a).ID {
		t.Fatalf("blocked_by = %v", cb.BlockedBy)
	}
}
