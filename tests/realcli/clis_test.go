package realcli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/testkit/gate"
)

// cli is one installed CLI version.
type cli struct {
	kind    string // drover's agent kind
	version string
	bin     string   // the executable
	args    []string // the profile's args ("" = the kind's defaults); a mode such as codex app-server
	sandbox bool     // every profile runs inside bwrap (network on), reading the installed CLIs
}

// packages maps an npm package to drover's kind and the binary it installs.
var packages = map[string]struct{ kind, bin string }{
	"@anthropic-ai/claude-code": {"claude", "claude"},
	"@openai/codex":             {"codex", "codex"},
	"@google/gemini-cli":        {"gemini", "gemini"},
	"opencode-ai":               {"opencode", "opencode"},
}

// installed lists the CLIs of kind under DROVER_AGENT_CLIS, skipping t
// when there are none.
func installed(t *testing.T, kind string) []cli {
	t.Helper()
	gate.RealCLIs.Require(t)
	root := os.Getenv("DROVER_AGENT_CLIS")
	var out []cli
	for pkg, p := range packages {
		if p.kind != kind {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(root, pkg+"@*"))
		for _, d := range dirs {
			bin := filepath.Join(d, "node_modules", ".bin", p.bin)
			if _, err := os.Stat(bin); err != nil {
				continue
			}
			out = append(out, cli{kind: kind, version: strings.TrimPrefix(filepath.Base(d), filepath.Base(pkg)+"@"), bin: bin})
		}
	}
	if len(out) == 0 {
		t.Skipf("no %s CLI under DROVER_AGENT_CLIS=%s (did .ci/agent-clis fail?); %s", kind, root, howToRun)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	t.Logf("running %s %s", kind, netnsNote)
	return out
}
