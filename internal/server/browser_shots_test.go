package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserScreenshots saves what the operator sees first on each page,
// at 1400×900 and on a 390×844 phone, as PNGs in $DROVER_SCREENSHOTS_DIR
// (it runs only when that is set: the pictures are for people to look at).
func TestBrowserScreenshots(t *testing.T) {
	dir := os.Getenv("DROVER_SCREENSHOTS_DIR")
	if dir == "" {
		t.Skip("set DROVER_SCREENSHOTS_DIR to save the dashboard's screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h := dashHarness(t)
	ctx := browser(t)
	pages := []struct{ name, path, wait string }{
		{"dashboard", "/", `#board`},
		{"card-blocked", "/cards/" + h.w.Blocked.Identifier, `.why3`},
		{"card-parked", "/cards/" + h.w.Parked.Identifier, `#ask`},
		{"status", "/status", `#st-agents`},
		{"runs", "/runs", `#runs`},
		{"run", "/runs/" + h.w.RunID, `#run-times`},
	}
	for _, size := range [][2]int64{{deskW, deskH}, {phoneW, phoneH}} {
		for _, p := range pages {
			do(t, ctx, viewport(size[0], size[1]), chromedp.Navigate(h.srv.URL+p.path), chromedp.WaitVisible(p.wait))
			for _, full := range []bool{false, true} {
				shot := chromedp.CaptureScreenshot()
				suffix := ""
				if full {
					shot, suffix = chromedp.FullScreenshot(100), "-full"
				}
				buf, err := chromedp.Run(ctx, shot)
				if err != nil {
					t.Fatalf("screenshot %s: %v", p.name, err)
				}
				f := filepath.Join(dir, fmt.Sprintf("%s-%dx%d%s.png", p.name, size[0], size[1], suffix))
				if err := os.WriteFile(f, buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
