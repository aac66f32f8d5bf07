package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// browser starts headless chromium for t, or skips t when it is missing.
func browser(t *testing.T) context.Context {
	t.Helper()
	gate.Chromium.Require(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(gate.ChromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1600, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("DROVER_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// claim does what the dispatcher does when it starts a card.
func claim(t *testing.T, st store.Store, ref string) {
	t.Helper()
	ctx := context.Background()
	c, err := st.GetCard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	c.Claim = &board.Claim{Owner: "node-b", Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	run := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: c.Claim.Epoch, Node: "node-b", Agent: "sim", ClaimedAt: time.Now()}
	if err := st.Apply(ctx, store.Change{Card: &c, NewRun: &run,
		Events: []board.Event{{At: time.Now(), CardID: c.ID, RunID: run.ID, Type: board.EvClaimed, Actor: "dispatcher:node-b"}}}); err != nil {
		t.Fatal(err)
	}
}

// text reads the visible text of sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// noReload marks the page; stillSamePage checks the mark survived (the page
// was updated in place, not reloaded).
func noReload(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload = true`)); err != nil {
		t.Fatal(err)
	}
}

func stillSamePage(t *testing.T, ctx context.Context) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`))
	if err != nil || !ok {
		t.Fatalf("the page reloaded (marker %v, %v)", ok, err)
	}
}

func TestBrowserBoard(t *testing.T) {
	h := newHarness(t)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(`#board`), chromedp.WaitVisible(`.live-dot.on`))
	boardText := text(t, ctx, `#board`)
	blockedCard := text(t, ctx, `.column.role-blocked .card`)
	cd1 := text(t, ctx, `#retry-queue .countdown`)
	for _, want := range []string{h.w.Ready.Identifier, "Write the README", "Fix the flaky login test", "P1"} {
		if !strings.Contains(boardText, want) {
			t.Errorf("board lacks %q", want)
		}
	}
	for _, want := range []string{"migration 0042 does not apply", "drover card resume DRV-4", "gave up after 5 attempts: agent_failed"} {
		if !strings.Contains(blockedCard, want) {
			t.Errorf("blocked card lacks %q: %q", want, blockedCard)
		}
	}
	attn := text(t, ctx, `#attention`)
	for _, want := range []string{"Blue or green?", "agent script: paused", "config_error", "notify_failing"} {
		if !strings.Contains(attn, want) {
			t.Errorf("needs-attention lane lacks %q: %q", want, attn)
		}
	}
	screenshot(t, ctx, "board.png")

	// The retry countdown ticks.
	time.Sleep(2100 * time.Millisecond)
	if cd2 := text(t, ctx, `#retry-queue .countdown`); cd1 == cd2 || cd1 == "" {
		t.Fatalf("countdown did not tick: %q then %q", cd1, cd2)
	}

	// A dispatcher claiming a card shows up live, without a reload.
	noReload(t, ctx)
	claim(t, h.w.Store, h.w.Ready.Identifier)
	do(t, ctx, chromedp.WaitVisible(`.column.role-running .card[data-card="`+h.w.Ready.Identifier+`"]`))
	stillSamePage(t, ctx)
}

func TestBrowserCardResume(t *testing.T) {
	h := newHarness(t)
	ctx := browser(t)
	id := h.w.Blocked.Identifier
	do(t, ctx, chromedp.Navigate(h.srv.URL+"/cards/"+id), chromedp.WaitVisible(`#btn-resume`), chromedp.WaitVisible(`.live-dot.on`))
	head := text(t, ctx, `.card-head`)
	if !strings.Contains(head, "migration 0042 does not apply") || !strings.Contains(head, "blocked") {
		t.Fatalf("card head: %q", head)
	}
	screenshot(t, ctx, "card-blocked.png")
	noReload(t, ctx)

	do(t, ctx, chromedp.Click(`#btn-resume`), chromedp.WaitNotPresent(`#btn-resume`))
	if state := text(t, ctx, `#card-state`); state != "ready" {
		t.Fatalf("after resume the card is %q", state)
	}
	// The dispatcher picks it up: the page follows over the event stream.
	claim(t, h.w.Store, id)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("card-state").textContent === "in_progress"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("card page did not follow the dispatcher: %v", err)
	}
	stillSamePage(t, ctx)
	screenshot(t, ctx, "card-running.png")
}
