package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

// fakeClaudeLaunch stands in for Claude Code: it writes its arguments and whether
// it sees ANTHROPIC_API_KEY beside itself, then prints a stream-json result.
const fakeClaudeLaunch = `#!/bin/sh
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
	if err := os.WriteFile(script, []byte(fakeClaudeLaunch), 0o755); err != nil {
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
	var logged bool
	for _, e := range w.events(c.ID) {
		logged = logged || (e.RunID == r.ID && strings.Contains(string(e.Data), `"argv":["`+script+`","-p"`))
	}
	if !logged {
		t.Errorf("no event of run %s carries its argv: %+v", r.ID, w.events(c.ID))
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

// TestPauseReasonNamesTheCardByIdentifier: a profile paused by a card's
// auth failure says which card as operators know it (DRV-1), not by its
// internal id.
func TestPauseReasonNamesTheCardByIdentifier(t *testing.T) {
	w := newWorld(t, 3)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.add("bad key", "", `{"sim": ["auth_failed"]}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		states, err := w.st.ListAgentStates(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(states) > 0 && states[0].State == policy.BreakerPaused {
			if r := states[0].Reason; !strings.Contains(r, "on card "+c.Identifier) || strings.Contains(r, c.ID) {
				t.Errorf("pause reason %q: want the card named %s, not %s", r, c.Identifier, c.ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the profile never paused: %+v", states)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, e := range w.events("") {
		if e.Type == "agent_paused" && strings.Contains(e.Reason, c.ID) {
			t.Errorf("event reason %q names the card by id", e.Reason)
		}
	}
}
