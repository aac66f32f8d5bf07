package testsummary

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit/gate"
)

// TestSkipSummary prints gate.Summary where go test ./... shows it; nothing
// when every suite ran.
func TestSkipSummary(t *testing.T) {
	text := gate.Summary(gate.All())
	if text == "" {
		return
	}
	if testing.Verbose() {
		t.Log("\n" + text)
		return
	}
	waitForSiblings(deadline(t))
	w, done := goStderr()
	defer done()
	fmt.Fprint(w, text)
	gate.Uncached(t) // a cached pass would replay no summary
}

// deadline is when waiting for the other packages gives up: a minute before
// this test's own timeout.
func deadline(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-time.Minute)
	}
	return time.Now().Add(10 * time.Minute)
}
