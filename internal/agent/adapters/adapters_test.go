package adapters

import (
	"os"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

var now = time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC)

func TestClassifyOutputClaude(t *testing.T) {
	out, err := os.ReadFile("../claude/testdata/usage_limit_subscription/stdout")
	if err != nil {
		t.Fatal(err)
	}
	c := ClassifyOutput("claude", 1, out, nil, now, nil)
	reset := time.Unix(1795990709, 0)
	if c.Kind != policy.KindUsageLimited || !c.RetryAt.Equal(reset) || c.RetryAfter != reset.Sub(now) {
		t.Errorf("got %+v", c)
	}
}

func TestClassifyOutputCodexText(t *testing.T) {
	errb, err := os.ReadFile("../codex/testdata/usage_limit--text/stderr")
	if err != nil {
		t.Fatal(err)
	}
	c := ClassifyOutput("codex", 1, nil, errb, now, nil)
	if c.Kind != policy.KindUsageLimited || !c.RetryAt.Equal(time.Date(2026, 11, 29, 21, 33, 0, 0, time.UTC)) {
		t.Errorf("got %+v", c)
	}
}

// TestCommandHasNoParser: a command agent's JSON-looking output is not read
// as Claude's; only rules, phrases and the exit code apply.
func TestCommandHasNoParser(t *testing.T) {
	out, err := os.ReadFile("../claude/testdata/auth_401/stdout")
	if err != nil {
		t.Fatal(err)
	}
	s := BuildSignals("command", 1, out, nil, now)
	if s.Structured.Present {
		t.Fatal("command output parsed as structured")
	}
	code := 1
	rules := []policy.Rule{{Name: "flaky_tests", Regex: `FAIL: Test`, ExitCode: &code, Kind: policy.KindAgentFailed}}
	cases := []struct {
		stdout, stderr string
		exit           int
		kind           policy.Kind
		source         string
	}{
		{"", "", 0, policy.KindSucceeded, "exit_code"},
		{"", "", 1, policy.KindAgentFailed, "exit_code:1"},
		{"--- FAIL: TestX", "", 1, policy.KindAgentFailed, "rule:flaky_tests"},
		{"", "curl: (7) Failed to connect", 1, policy.KindUnknown, "exit_code:1"},
		{"", "API Error: Unable to connect to API (ConnectionRefused)", 1, policy.KindNetwork, "phrase:claude_unable_to_connect"},
	}
	for _, c := range cases {
		got := ClassifyOutput("command", c.exit, []byte(c.stdout), []byte(c.stderr), now, rules)
		if got.Kind != c.kind || got.Source != c.source {
			t.Errorf("%q/%q exit %d → %s (%s); want %s (%s)", c.stdout, c.stderr, c.exit, got.Kind, got.Source, c.kind, c.source)
		}
	}
}

func TestParsersAndArgs(t *testing.T) {
	for _, k := range []string{"claude", "codex"} {
		if NewParser(k) == nil || len(DefaultArgs(k)) == 0 {
			t.Errorf("%s: no parser or args", k)
		}
	}
	if NewParser("command") != nil || DefaultArgs("sim") != nil {
		t.Error("command/sim have no parser and no default args")
	}
}
