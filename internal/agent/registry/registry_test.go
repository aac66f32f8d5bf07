package registry

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
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
		{"", "curl: (7) Failed to connect", 1, policy.KindNetwork, "phrase:curl_network"},
		{"", "error: Failed to connect to the server", 1, policy.KindNetwork, "phrase:transport"},
		{"", "API Error: Unable to connect to API (ConnectionRefused)", 1, policy.KindNetwork, "text:errno=ConnectionRefused"},
		{"", "something new went wrong", 1, policy.KindUnknown, "exit_code:1"},
	}
	for _, c := range cases {
		got := ClassifyOutput("command", c.exit, []byte(c.stdout), []byte(c.stderr), now, rules)
		if got.Kind != c.kind || got.Source != c.source {
			t.Errorf("%q/%q exit %d → %s (%s); want %s (%s)", c.stdout, c.stderr, c.exit, got.Kind, got.Source, c.kind, c.source)
		}
	}
}

func TestEveryKindIsDescribed(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "command,claude,codex,gemini,opencode,sim" {
		t.Fatalf("kinds = %v; errors list them in this order", names)
	}
	for _, n := range names {
		reg, ok := Lookup(n)
		if !ok || reg.Kind != n || reg.Doc == "" || reg.New == nil {
			t.Errorf("%s: incomplete registration %+v", n, reg)
		}
		if reg.InProcess == (reg.RequiresCommand || reg.DefaultCommand != "") {
			t.Errorf("%s: a kind either runs in process or runs a program", n)
		}
	}
	if _, ok := Lookup("gpt"); ok {
		t.Error("unknown kind found")
	}
	if reg, ok := Lookup(""); !ok || reg.Kind != "command" {
		t.Error(`"" is not the command kind`)
	}
}

func TestParsersAndArgs(t *testing.T) {
	for _, k := range []string{"claude", "codex", "gemini", "opencode"} {
		p := WithDefaults(agent.Profile{Kind: k})
		if NewParser(k) == nil || len(p.Args) == 0 || p.Command != k {
			t.Errorf("%s: no parser, args or command: %+v", k, p)
		}
	}
	if NewParser("command") != nil || WithDefaults(agent.Profile{Kind: "sim"}).Args != nil {
		t.Error("command has no parser; sim has no default args")
	}
	if NewParser("sim") == nil {
		t.Error("sim prints Claude's output; Claude's parser reads it")
	}
	own := WithDefaults(agent.Profile{Kind: "claude", Command: "/opt/claude", Args: []string{"--model", "x"}, MaxTurns: 5})
	if got := strings.Join(own.Args, " "); own.Command != "/opt/claude" || got != "-p --output-format stream-json --verbose --max-turns 5 --model x" {
		t.Errorf("a profile's own command is kept and its args follow the defaults: %q %q", own.Command, got)
	}
	if again := WithDefaults(own); strings.Join(again.Args, " ") != strings.Join(own.Args, " ") {
		t.Errorf("WithDefaults twice adds the defaults twice: %q", again.Args)
	}
	replaced := WithDefaults(agent.Profile{Kind: "claude", ArgsMode: agent.ArgsReplace, Args: []string{"-p", "--output-format", "json"}, MaxTurns: 5})
	if got := strings.Join(replaced.Args, " "); got != "-p --output-format json" {
		t.Errorf("args_mode: replace keeps the profile's args alone: %q", got)
	}
	cx := WithDefaults(agent.Profile{Kind: "codex", Args: []string{"--model", "o3"}})
	if got := strings.Join(cx.Args, " "); got != "exec --json --skip-git-repo-check --model o3 -" {
		t.Errorf("codex args go between the defaults and the final -: %q", got)
	}
	capped := WithDefaults(agent.Profile{Kind: "claude", MaxTurns: 7})
	if got := strings.Join(capped.Args, " "); got != "-p --output-format stream-json --verbose --max-turns 7" {
		t.Errorf("claude args with max_turns = %q", got)
	}
	if got := strings.Join(WithDefaults(agent.Profile{Kind: "codex", MaxTurns: 7}).Args, " "); strings.Contains(got, "turns") {
		t.Errorf("codex has no turn cap: %q", got)
	}
}

func TestNew(t *testing.T) {
	want := `agents.profiles.x.kind: "gpt" is not ` + strings.Join(Names()[:len(Names())-1], ", ") + " or " + Names()[len(Names())-1]
	if _, err := New(agent.Profile{Name: "x", Kind: "gpt"}); err == nil || err.Error() != want {
		t.Errorf("unknown kind: %v", err)
	}
	for _, k := range Names() {
		if ag, err := New(agent.Profile{Name: "p", Kind: k, Command: "true"}); err != nil || ag == nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if err := ValidateSpec("sim", []byte(`{"sim":["bogus"]}`)); err == nil {
		t.Error("sim accepted a bogus kind in spec.sim")
	}
	if ValidateSpec("command", []byte(`{"sim":["bogus"]}`)) != nil || !InProcess("sim") || InProcess("claude") {
		t.Error("only sim reads the spec and runs in process")
	}
}

func TestCheckArgs(t *testing.T) {
	for _, c := range []struct {
		kind string
		args []string
		want string // "" = accepted
	}{
		{"claude", []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "x"}, ""},
		{"claude", []string{"--print", "--output-format=json"}, ""},
		{"claude", []string{"--model", "x"}, "drops -p"},
		{"claude", []string{"-p", "--model", "x"}, "drops --output-format stream-json"},
		{"claude", []string{"-p", "--output-format", "stream-json"}, "without --verbose"},
		{"codex", []string{"exec", "--json", "-"}, ""},
		{"codex", []string{"--json", "-"}, "drops exec"},
		{"codex", []string{"exec", "-"}, "drops --json"},
		{"opencode", []string{"run", "--format", "json", "-m", "x/y"}, ""},
		{"opencode", []string{"run", "--format=json"}, ""},
		{"opencode", []string{"--format", "json"}, "drops run"},
		{"opencode", []string{"run", "--format", "default"}, "drops --format json"},
		{"gemini", []string{"--output-format", "stream-json", "-m", "gemini-2.5-pro"}, ""},
		{"gemini", []string{"-o", "stream-json"}, ""},
		{"gemini", []string{"--output-format=stream-json", "--yolo"}, ""},
		{"gemini", []string{"--yolo", "--skip-trust"}, "drops --output-format stream-json"},
		{"gemini", []string{"--output-format", "json"}, "drops --output-format stream-json"},
		{"command", nil, ""},
	} {
		err := CheckArgs(c.kind, c.args)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %q: %v, want %q", c.kind, c.args, err, c.want)
		}
	}
}

func TestPassEnv(t *testing.T) {
	claude := PassEnv(agent.Profile{Kind: "claude", EnvPassthrough: []string{"MY_PROXY_TOKEN"}})
	for _, want := range []string{"PATH", "HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "HTTPS_PROXY", "SSL_CERT_FILE", "MY_PROXY_TOKEN"} {
		if !slices.Contains(claude, want) {
			t.Errorf("claude agents do not get %s: %q", want, claude)
		}
	}
	if slices.Contains(claude, "OPENAI_API_KEY") {
		t.Error("claude agents get codex's key")
	}
	codex := PassEnv(agent.Profile{Kind: "codex"})
	for _, want := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME", "NO_PROXY"} {
		if !slices.Contains(codex, want) {
			t.Errorf("codex agents do not get %s: %q", want, codex)
		}
	}
	if PassEnv(agent.Profile{Kind: "sim"}) != nil {
		t.Error("the in-process sim kind inherits nothing")
	}
}
