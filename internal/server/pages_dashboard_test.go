package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

func (h *harness) page(path string) string {
	h.t.Helper()
	return string(h.want(h.do("GET", path, nil), 200).Body)
}

// TestColumnPageCount: the column page counts from one ("1 of 1", "1–2 of 2").
func TestColumnPageCount(t *testing.T) {
	h := newHarness(t)
	for path, want := range map[string]string{"/columns/blocked": ">1 of 1<", "/columns/ready": ">1–2 of 2<",
		"/columns/review": ">none<", "/columns/ready?q=README": ">1 of 1<"} {
		if p := h.page(path); !strings.Contains(p, want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
}

// TestRunsPage: every run, newest first, RunsPage to a page, each linked.
func TestRunsPage(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 52; i++ {
		at := base.Add(time.Duration(i) * time.Second)
		r := board.Run{ID: board.NewID(), CardID: h.w.Ready.ID, Attempt: i + 1, Node: "node-a", Agent: "sim", ClaimedAt: at, StartedAt: &at, FinishedAt: &at, Outcome: board.OutcomeReleased}
		if err := h.w.Store.Apply(ctx, store.Change{NewRun: &r}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := h.w.Store.ListRuns(ctx, store.RunFilter{Newest: true, Limit: 100})
	if err != nil || len(runs) != 54 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	first := h.page("/runs")
	if !strings.Contains(first, ">1–50</span>") || !strings.Contains(first, `href="?offset=50"`) || !strings.Contains(first, `href="/runs/`+runs[0].ID+`"`) {
		t.Errorf("the first runs page lacks its span, its next link or the newest run")
	}
	if strings.Index(first, runs[0].ID) > strings.Index(first, runs[1].ID) {
		t.Error("the runs page is not newest first")
	}
	second := h.page("/runs?offset=50")
	if !strings.Contains(second, ">51–54</span>") || !strings.Contains(second, runs[53].ID) || strings.Contains(second, `data-run="`+runs[0].ID+`"`) {
		t.Errorf("the second runs page is wrong")
	}
	if !strings.Contains(h.page("/"), `<a href="/runs">Runs</a>`) {
		t.Error("the nav does not link the runs page")
	}
}

// TestRunPageTimes: a run's page has its start, end and duration.
func TestRunPageTimes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	end := start.Add(2*time.Minute + 5*time.Second)
	r := board.Run{ID: board.NewID(), CardID: h.w.Ready.ID, Attempt: 1, Node: "node-a", Agent: "sim", ClaimedAt: start.Add(-time.Second),
		StartedAt: &start, FinishedAt: &end, Outcome: board.OutcomeSucceeded}
	if err := h.w.Store.Apply(ctx, store.Change{NewRun: &r}); err != nil {
		t.Fatal(err)
	}
	p := h.page("/runs/" + r.ID)
	for _, want := range []string{"2026-03-04 10:00:00 UTC", "2026-03-04 10:02:05 UTC", "2m05s"} {
		if !strings.Contains(p, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
}

// TestStatusPage: /status is a page for people; the JSON stays at the API;
// no per-kind totals block names a kind the board does not run.
func TestStatusPage(t *testing.T) {
	h := newHarness(t)
	r := h.want(h.do("GET", "/status", nil), 200)
	p := string(r.Body)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status is %s", r.Header.Get("Content-Type"))
	}
	for _, want := range []string{"<h1>Status", "config_error", "node-a", `<span class="badge br-closed" title="breaker closed">healthy</span>`,
		"drover agent resume script", "$0.52", `href="/api/v1/state"`, "awaiting_input"} {
		if !strings.Contains(p, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
	for _, bad := range []string{"codex", "{\n", `"generated_at"`} {
		if strings.Contains(strings.ToLower(p), bad) {
			t.Errorf("the status page shows %q", bad)
		}
	}
	if _, ok := h.want(h.do("GET", "/api/v1/state", nil), 200).json(t)["codex_totals"]; !ok {
		t.Error("the API's state lost Symphony's codex_totals")
	}
	if !strings.Contains(h.page("/"), `<a href="/status">Status</a>`) {
		t.Error("the nav does not link the status page")
	}
}

// TestMirroredCardShowsItsIssue: a card mirroring a tracker issue shows the
// issue's key on its board tile, its column row and its page.
func TestMirroredCardShowsItsIssue(t *testing.T) {
	h := newHarness(t)
	c, err := h.w.Store.CreateCard(context.Background(), "DRV", board.Card{Title: "Crash on empty config", State: "backlog", Labels: []string{}, BlockedBy: []string{},
		External: &board.External{Tracker: "linear", ID: "9f1c", Key: "ENG-12", URL: "https://linear.app/acme/issue/ENG-12"}}, "tracker:linear")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/columns/backlog", "/cards/" + c.Identifier} {
		if p := h.page(path); !strings.Contains(p, `class="ext-key"`) || !strings.Contains(p, ">ENG-12<") {
			t.Errorf("%s does not show ENG-12", path)
		}
	}
}
