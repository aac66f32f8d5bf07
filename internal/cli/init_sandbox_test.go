package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent/sandbox"
)

// drover init probes the sandbox: a bwrap that starts leaves the real-agent
// profiles' sandbox key on; a missing one comments it out with the reason.
func TestInitWritesTheSandboxOnlyWhereItStarts(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bwrap string
		on          bool
	}{
		{"a bwrap that starts", fake, true},
		{"no bwrap", filepath.Join(t.TempDir(), "no-bwrap"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(sandbox.BwrapEnv, tc.bwrap)
			sandbox.Forget()
			t.Cleanup(sandbox.Forget)
			e := newEnv(t, "")
			b, err := os.ReadFile(e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			on := strings.Count(text, "    #   sandbox: {kind: bwrap}")
			off := strings.Count(text, "    #   # sandbox: {kind: bwrap}")
			why := strings.Count(text, "sandbox off: drover init found no working sandbox here: bwrap ("+tc.bwrap+") is not installed")
			if tc.on && (on != 2 || off != 0 || why != 0) {
				t.Errorf("with a working bwrap: %d sandbox keys on, %d off, %d reasons; want 2, 0, 0", on, off, why)
			}
			if !tc.on && (on != 0 || off != 2 || why != 2) {
				t.Errorf("without bwrap: %d sandbox keys on, %d off, %d reasons; want 0, 2, 2\n%s", on, off, why, text)
			}
		})
	}
}
