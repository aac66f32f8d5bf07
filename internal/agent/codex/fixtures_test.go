package codex_test

import (
	"testing"

	"github.com/drover-dev/drover/internal/agent/internal/fixtures"
	"github.com/drover-dev/drover/internal/agent/registry"
)

// TestFixtures runs every captured Codex CLI run through the parser and
// Classify and checks the kind is the expected one or an honest alternative
// (fixtures.Run).
func TestFixtures(t *testing.T) { fixtures.Run(t, "codex", "testdata", registry.BuildSignals) }
