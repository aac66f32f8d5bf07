package gemini_test

import (
	"testing"

	"github.com/drover-dev/drover/internal/agent/internal/fixtures"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/policy"
)

// TestFixtures runs every captured Gemini CLI run through the parser and
// Classify and checks the kind is the expected one or an honest alternative.
func TestFixtures(t *testing.T) {
	for _, f := range fixtures.Load(t, "testdata") {
		t.Run(f.Name, func(t *testing.T) {
			s := registry.BuildSignals("gemini", f.ExitCode, f.Stdout, f.Stderr, fixtures.CapturedAt)
			if f.ExitCode == 124 {
				s.KilledFor = "timeout"
			}
			c := policy.Classify(s, nil)
			t.Logf("%s → %s (%s) %q", f.Name, c.Kind, c.Source, c.Message)
			if !f.Accepts(c.Kind) {
				t.Errorf("kind %s (source %s, message %q); want %s or %v\nnotes: %s",
					c.Kind, c.Source, c.Message, f.Kind, f.Alt, f.Notes)
			}
			if len(s.Structured.ParseErrors) > 0 {
				t.Errorf("parse errors on a real capture: %v", s.Structured.ParseErrors)
			}
		})
	}
}
