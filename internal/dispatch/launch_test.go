package dispatch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeClaude stands in for Claude Code: it writes its arguments and whether
// it sees ANTHROPIC_API_KEY beside itself, then prints a stream-json result.
const fakeClaude = `#!/bin/sh
printf '%s\n' "$@" > "$(dirname "$0")/argv.txt"
[ -n "$ANTHROPIC_API_KEY" ] && echo key > "$(dirname "$0")/key.txt"
cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.02,"usage":{"input_tokens":10,"output_tokens":5}}'
`

// TestClaudeProfileArgsFollowTheDefaults: a claude profile's own args come
// after -p --output-format stream-json --verbose --max-turns (they used to replace them,
// and the run "succeeded" with no cost), the key in drover's environment
// reaches it, and the run records what ran without the key's value.
func TestClaudeProfileArgsFollowTheDefaults(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
	bin := t.TempDir()
	script := filepath.Join(bin, "claude")
	if err := os.WriteFile(script, []byte(fakeClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	w := newWorldFrom(t, worldWorkflow(2).Set("agents", "default: c\nprofiles:\n  c: {kind: claude, command: "+script+", args: [--model, x]}"))
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.add("with args", "", "{}")
	w.waitFor(c.Identifier, "review", inState("review"))
	got, err := os.ReadFile(filepath.Join(bin, "argv.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "-p --output-format stream-json --verbose --max-turns 20 --model x"; strings.Join(strings.Fields(string(got)), " ") != want {
		t.Errorf("claude ran with %q, want %q", strings.Fields(string(got)), want)
	}
	if _, err := os.Stat(filepath.Join(bin, "key.txt")); err != nil {
		t.Error("ANTHROPIC_API_KEY from drover's environment did not reach the agent")
	}
	rs := w.runs(c.ID)
	if len(rs) != 1 {
		t.Fatalf("runs = %s", attempts(rs))
	}
	r := rs[0]
	if r.CostUSD != 0.02 || r.TokensIn != 10 {
		t.Errorf("cost %v, tokens %d: the parser did not read the result", r.CostUSD, r.TokensIn)
	}
	if want := script + " -p --output-format stream-json --verbose --max-turns 20 --model x"; strings.Join(r.Argv, " ") != want {
		t.Errorf("run argv %q, want %q", r.Argv, want)
	}
	if !slices.Contains(r.EnvNames, "ANTHROPIC_API_KEY") || !slices.Contains(r.EnvNames, "DROVER_CARD_ID") {
		t.Errorf("run env names %q", r.EnvNames)
	}
	log, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(log), "\n")
	if !strings.HasPrefix(first, "[drover: run: "+script+" -p --output-format stream-json --verbose --max-turns 20 --model x; env: ") {
		t.Errorf("first log line %q", first)
	}
	if strings.Contains(string(log), "sk-ant-test") {
		t.Error("the key's value is in the run log")
	}
}
