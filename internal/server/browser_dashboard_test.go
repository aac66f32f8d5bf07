package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/store"
)

// The operator's two screens: a laptop and a phone.
const (
	deskW, deskH   = 1400, 900
	phoneW, phoneH = 390, 844
)

// box is an element's bounding box in CSS pixels of the viewport.
type box struct{ Top, Left, Bottom, Right, Width, Height float64 }

// dashHarness is the seeded board plus what the dashboard's pages show
// beyond it: the parked card's run asked with options, a card mirrors a
// GitHub issue, and explain is the dispatcher's own.
func dashHarness(t *testing.T) *harness {
	t.Helper()
	var cfg *config.Config
	h := newHarness(t, func(o *server.Options) {
		cfg = o.Config()
		o.Explain = func(ctx context.Context, ref string) (any, error) {
			return dispatch.Explain(ctx, o.Store, cfg, ref, time.Now())
		}
	})
	ctx := context.Background()
	now := time.Now().UTC()
	started, finished := now.Add(-10*time.Minute), now.Add(-10*time.Minute+2*time.Minute+5*time.Second)
	ask := board.Run{ID: board.NewID(), CardID: h.w.Parked.ID, Attempt: 1, RetryEpoch: h.w.Parked.RetryEpoch, Node: "node-a", Agent: "sim",
		ClaimedAt: started, StartedAt: &started}
	report := &board.AgentReport{Kind: board.ReportAsk, Question: "Blue or green?", Options: []string{"Blue", "Green"}, At: finished}
	for _, ch := range []store.Change{{NewRun: &ask}, {AgentCall: &store.AgentCall{RunID: ask.ID, CardID: ask.CardID, Report: report}}} {
		if err := h.w.Store.Apply(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	ask.Outcome, ask.Kind, ask.FinishedAt, ask.Report = board.OutcomeParked, "input_required", &finished, report
	if err := h.w.Store.Apply(ctx, store.Change{Run: &ask}); err != nil {
		t.Fatal(err)
	}
	mirrored := board.Card{Title: "Crash on empty config", State: "backlog", Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage(`{}`),
		External: &board.External{Tracker: "github", ID: "7", Key: "acme/app#7", URL: "https://github.com/acme/app/issues/7"}}
	if _, err := h.w.Store.CreateCard(ctx, "DRV", mirrored, "tracker:github"); err != nil {
		t.Fatal(err)
	}
	return h
}

func viewport(w, h int64) chromedp.Action[chromedp.Void] { return chromedp.EmulateViewport(w, h) }

// rect is sel's bounding box.
func rect(t *testing.T, ctx context.Context, sel string) box {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + quoteJS(sel) + `); if (!e) return null;
		const r = e.getBoundingClientRect(); return {Top: r.top, Left: r.left, Bottom: r.bottom, Right: r.right, Width: r.width, Height: r.height}; })()`
	b, err := chromedp.Run(ctx, chromedp.Evaluate[*box](js))
	if err != nil || b == nil {
		t.Fatalf("no box for %s: %v", sel, err)
	}
	return *b
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func quoteJS(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBrowserBoardFitsTheScreen: at 1400×900 the board starts above the
// fold and every column is reachable (inside the viewport, or in a board
// that scrolls sideways); on a phone the board scrolls sideways and its
// last column can be scrolled into view.
func TestBrowserBoardFitsTheScreen(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`#board`))
	first := rect(t, ctx, `#board .column`)
	if first.Top >= deskH {
		t.Errorf("the board's first column starts at y=%.0f, below the fold (%d)", first.Top, deskH)
	}
	cols := eval[[]string](t, ctx, `[...document.querySelectorAll("#board .column")].map(c => c.dataset.column)`)
	if len(cols) != 8 {
		t.Fatalf("columns %v, want 8", cols)
	}
	scrolls := eval[bool](t, ctx, `(() => { const b = document.getElementById("board"); const o = getComputedStyle(b).overflowX;
		return (o === "auto" || o === "scroll") && b.scrollWidth > b.clientWidth; })()`)
	for _, c := range cols {
		r := rect(t, ctx, `#board .column[data-column="`+c+`"]`)
		if (r.Left < 0 || r.Right > deskW || r.Width < 100) && !scrolls {
			t.Errorf("column %s is at x %.0f–%.0f (width %.0f): cut off at %d px and the board does not scroll", c, r.Left, r.Right, r.Width, deskW)
		}
	}

	do(t, ctx, viewport(phoneW, phoneH), chromedp.Reload(), chromedp.WaitVisible(`#board`))
	if !eval[bool](t, ctx, `(() => { const b = document.getElementById("board"); const o = getComputedStyle(b).overflowX;
		return (o === "auto" || o === "scroll") && b.scrollWidth > b.clientWidth; })()`) {
		t.Fatal("on a phone the board neither fits nor scrolls sideways")
	}
	if !eval[bool](t, ctx, `document.querySelector(".board-wrap").classList.contains("overflows")`) {
		t.Error("on a phone the board does not say it scrolls sideways")
	}
	eval[bool](t, ctx, `(() => { const b = document.getElementById("board"); b.scrollLeft = b.scrollWidth; return true; })()`)
	last := rect(t, ctx, `#board .column[data-column="cancelled"]`)
	if last.Left < 0 || last.Right > phoneW+1 {
		t.Errorf("scrolled to the end, the cancelled column is at x %.0f–%.0f, not on the %d px screen", last.Left, last.Right, phoneW)
	}
	if pageW := eval[float64](t, ctx, `document.documentElement.scrollWidth`); pageW > phoneW+1 {
		t.Errorf("on a phone the page itself is %.0f px wide (it scrolls sideways as a whole)", pageW)
	}
}
