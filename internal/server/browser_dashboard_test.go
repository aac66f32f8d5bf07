package server_test

import (
	"context"
	"encoding/json"
	"strings"
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
	// A busy board: four cards running (the running table is four rows).
	for _, title := range []string{"Add a health check", "Cache the board query", "Retry webhook deliveries"} {
		c, err := h.w.Store.CreateCard(ctx, "DRV", board.Card{Title: title, State: "ready", Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage(`{}`)}, "operator")
		if err != nil {
			t.Fatal(err)
		}
		claim(t, h.w.Store, c.Identifier)
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

// TestBrowserBoardFitsTheScreen: at 1400×900 the board starts well above
// the fold (a busy board: four runs, every lane of needs-attention) and every column is reachable (inside the viewport, or in a board
// that scrolls sideways); on a phone the board scrolls sideways and its
// last column can be scrolled into view.
func TestBrowserBoardFitsTheScreen(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`#board`))
	first := rect(t, ctx, `#board .column`)
	t.Logf("the board's first column starts at y=%.0f", first.Top)
	// Above the fold: at least a third of the screen shows the board's cards.
	if first.Top >= deskH-300 {
		t.Errorf("the board's first column starts at y=%.0f: less than 300 px of it above the fold (%d)", first.Top, deskH)
	}
	cols := eval[[]string](t, ctx, `[...document.querySelectorAll("#board .column")].map(c => c.dataset.column)`)
	if len(cols) != 8 {
		t.Fatalf("columns %v, want 8", cols)
	}
	// The default board's eight columns fit 1400 px: none is cut off or
	// needs the sideways scroll (a board with more columns scrolls, below).
	for _, c := range cols {
		r := rect(t, ctx, `#board .column[data-column="`+c+`"]`)
		if r.Left < 0 || r.Right > deskW || r.Width < 140 {
			t.Errorf("column %s is at x %.0f–%.0f (width %.0f): cut off at %d px", c, r.Left, r.Right, r.Width, deskW)
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

// TestBrowserBlockedCardReads: a blocked card's reason is three short
// labelled blocks, side by side at 1400×900, with the command to copy.
func TestBrowserBlockedCardReads(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/cards/"+h.w.Blocked.Identifier), chromedp.WaitVisible(`.card-head .why3`))
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll(".card-head .why3 h4")].map(e => e.textContent)`)
	if strings.Join(labels, "|") != "What|Where|How to continue" {
		t.Errorf("block reason labels %q", labels)
	}
	var tops []float64
	for _, sel := range []string{".why-what", ".why-where", ".why-how"} {
		r := rect(t, ctx, `.card-head `+sel)
		if r.Height > 140 || r.Bottom > deskH {
			t.Errorf("%s is %.0f px tall, ending at y=%.0f: not a short block above the fold", sel, r.Height, r.Bottom)
		}
		tops = append(tops, r.Top)
	}
	if tops[0] != tops[1] || tops[1] != tops[2] {
		t.Errorf("at %d px the blocks are stacked (tops %v), not side by side", deskW, tops)
	}
	if got := text(t, ctx, `.card-head .why-how code.cmd`); got != "drover card resume DRV-4" {
		t.Errorf("the command to copy is %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector(".card-head .why-how button.copy").dataset.copy`); got != "drover card resume DRV-4" {
		t.Errorf("the copy button copies %q", got)
	}
	// Copy puts it on the clipboard, or (where the browser refuses) selects it.
	do(t, ctx, chromedp.Click(`.card-head .why-how button.copy`), chromedp.WaitVisible(`#flash`))
	flash := text(t, ctx, `#flash`)
	sel := eval[string](t, ctx, `getSelection().toString()`)
	if flash != "copied: drover card resume DRV-4" && sel != "drover card resume DRV-4" {
		t.Errorf("after Copy the page says %q and the selection is %q", flash, sel)
	}
	t.Logf("copy: %q", flash)
	// On the board the tile is brief: what, and the command.
	do(t, ctx, chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`#board`))
	if r := rect(t, ctx, `.column.role-blocked .card`); r.Height > 260 {
		t.Errorf("the blocked tile is a %.0f px tower", r.Height)
	}
	do(t, ctx, viewport(phoneW, phoneH), chromedp.Navigate(h.srv.URL+"/cards/"+h.w.Blocked.Identifier), chromedp.WaitVisible(`.card-head .why3`))
	if r := rect(t, ctx, `.card-head .why-how`); r.Right > phoneW {
		t.Errorf("on a phone the how block ends at x=%.0f, off the screen", r.Right)
	}
}

// TestBrowserParkedCardAnswersFirst: a parked card's first action is
// answering: the agent's options are buttons, the first button of the page
// is one, clicking it records that answer; Resume comes after; no red ✗.
func TestBrowserParkedCardAnswersFirst(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	id := h.w.Parked.Identifier
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/cards/"+id), chromedp.WaitVisible(`#ask`), chromedp.WaitVisible(`.live-dot.on`))
	buttons := eval[[]string](t, ctx, `[...document.querySelectorAll("main button")].map(b => b.textContent.trim())`)
	if len(buttons) < 3 || buttons[0] != "Blue" || buttons[1] != "Green" {
		t.Fatalf("the page's buttons are %q; want the options Blue, Green first", buttons)
	}
	if i := indexOf(buttons, "Resume without answering"); i < 0 || i < indexOf(buttons, "Send answer") {
		t.Errorf("Resume is not after the answer: %q", buttons)
	}
	if r := rect(t, ctx, `#ask .option`); r.Bottom > deskH {
		t.Errorf("the first option is at y=%.0f, below the fold", r.Bottom)
	}
	if r := rect(t, ctx, `#answer-text`); r.Bottom > deskH {
		t.Errorf("the answer box is at y=%.0f, below the fold", r.Bottom)
	}
	body := eval[string](t, ctx, `document.querySelector("main").innerText`)
	if strings.Contains(body, "✗") {
		t.Errorf("a parked card shows a red ✗")
	}
	if got := eval[string](t, ctx, `document.querySelector("#ask .wait-mark").textContent`); !strings.Contains(got, "waiting for you") {
		t.Errorf("no waiting-for-you mark: %q", got)
	}
	// What the operator types survives the page's live refresh.
	do(t, ctx, chromedp.SendKeys(`#answer-text`, "half typed"))
	h.want(h.do("POST", "/api/v1/cards/"+id+"/comment", map[string]string{"text": "a note from a colleague"}), 201)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live").innerText.includes("a note from a colleague")`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the card page did not show the new comment: %v", err)
	}
	if got := eval[string](t, ctx, `document.getElementById("answer-text").value`); got != "half typed" {
		t.Errorf("a live refresh replaced the half-typed answer with %q", got)
	}
	do(t, ctx, chromedp.Click(`#ask .option:nth-of-type(2)`), chromedp.WaitNotPresent(`#ask`))
	c, err := h.w.Store.GetCard(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := h.w.Store.ListComments(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != "ready" || len(cms) == 0 || cms[len(cms)-1].Body != "Green" {
		t.Errorf("after clicking Green the card is %s with comments %+v; want ready with the answer Green", c.State, cms)
	}
}

// TestBrowserHealthyProfiles: a healthy profile reads "healthy", not the
// breaker word; a held one says its state and keeps the breaker's.
func TestBrowserHealthyProfiles(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`.agents`))
	badges := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll(".agents .agent .badge")].map(b => [b.parentElement.querySelector("b").textContent, b.innerText + "|" + b.title]))`)
	if badges["sim"] != "HEALTHY|breaker closed" {
		t.Errorf("the healthy profile's badge reads %q", badges["sim"])
	}
	if badges["script"] != "PAUSED|breaker paused" {
		t.Errorf("the paused profile's badge reads %q", badges["script"])
	}
	if body := eval[string](t, ctx, `document.querySelector(".agents").innerText`); strings.Contains(body, "CLOSED") {
		t.Errorf("the agents row says CLOSED: %q", body)
	}
}

// TestBrowserRunsFromTheNav: the nav leads to the runs page, whose rows
// are newest first and lead to each run's page with its times.
func TestBrowserRunsFromTheNav(t *testing.T) {
	h := dashHarness(t)
	ctx := browser(t)
	do(t, ctx, viewport(deskW, deskH), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`#board`),
		chromedp.Click(`header nav a[href="/runs"]`), chromedp.WaitVisible(`#runs`))
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll("#runs tr[data-run]")].map(r => r.dataset.run)`)
	runs, err := h.w.Store.ListRuns(context.Background(), store.RunFilter{Newest: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(runs) || len(ids) == 0 || ids[0] != runs[0].ID {
		t.Fatalf("runs page lists %q, want %d runs newest first", ids, len(runs))
	}
	do(t, ctx, chromedp.Click(`#runs tr[data-run="`+h.w.RunID+`"] a.run-link`), chromedp.WaitVisible(`#run-times`))
	if got := text(t, ctx, `#run-started`); !strings.Contains(got, "UTC") {
		t.Errorf("run page started: %q", got)
	}
	if got := text(t, ctx, `#run-finished`); got != "still running" {
		t.Errorf("run page finished: %q", got)
	}
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}
