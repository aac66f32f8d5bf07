package gate

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	on := Gate{Suite: "on suite", Where: "pkg/a", Off: func() string { return "" }}
	off := Gate{Suite: "off suite", Where: "pkg/b", Off: func() string { return "set DROVER_X=1" }}
	if got := Summary([]Gate{on, on}); got != "" {
		t.Errorf("every suite on: summary %q, want nothing", got)
	}
	got := Summary([]Gate{on, off})
	if !strings.Contains(got, "go test skipped") || !strings.Contains(got, "  off suite (pkg/b): set DROVER_X=1\n") || strings.Contains(got, "on suite") {
		t.Errorf("one suite off: summary\n%s", got)
	}
}
