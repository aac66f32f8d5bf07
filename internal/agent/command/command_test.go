package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/policy"
)

const prompt = "Fix DRV-42: the 'quoted' \"thing\" and $HOME\nsecond line ünïcode"

func inv(t *testing.T) agent.Invocation {
	t.Helper()
	return agent.Invocation{
		Prompt:    prompt,
		Workspace: t.TempDir(),
		LogPath:   filepath.Join(t.TempDir(), "runs", "r1.log"),
		Env:       map[string]string{"DROVER_CARD_IDENTIFIER": "DRV-42"},
		Timeout:   10 * time.Second,
	}
}

func run(t *testing.T, p agent.Profile, in agent.Invocation) agent.Result {
	t.Helper()
	res, err := New(p, nil).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Signals.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.Signals.ExitCode, res.Signals.Stderr)
	}
	return res
}

func TestPromptViaStdin(t *testing.T) {
	res := run(t, agent.Profile{Name: "s", Command: "cat"}, inv(t))
	if res.Signals.Stdout != prompt || res.Signals.AgentKind != "command" {
		t.Errorf("got %+v", res.Signals)
	}
	if res.LastLine != "second line ünïcode" {
		t.Errorf("last line %q", res.LastLine)
	}
}

func TestPromptViaFile(t *testing.T) {
	in := inv(t)
	p := agent.Profile{Name: "f", Command: "sh", Prompt: PromptFile,
		Args: []string{"-c", `cat "$DROVER_PROMPT_FILE"; echo; echo ---; cat "$1"`, "sh", "{{prompt_file}}"}}
	res := run(t, p, in)
	if want := prompt + "\n---\n" + prompt; res.Signals.Stdout != want {
		t.Errorf("stdout %q, want %q", res.Signals.Stdout, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(in.LogPath), "r1.prompt.md")); err != nil {
		t.Errorf("prompt file not beside the log: %v", err)
	}
	// Without a log path the prompt goes to the workspace's .drover/.
	in.LogPath = ""
	run(t, p, in)
	if b, err := os.ReadFile(filepath.Join(in.Workspace, ".drover", "prompt.md")); err != nil || string(b) != prompt {
		t.Errorf("workspace prompt file: %q, %v", b, err)
	}
}

func TestPromptViaArg(t *testing.T) {
	res := run(t, agent.Profile{Name: "a", Command: "printf", Args: []string{"%s"}, Prompt: PromptArg}, inv(t))
	if res.Signals.Stdout != prompt {
		t.Errorf("appended arg: %q", res.Signals.Stdout)
	}
	res = run(t, agent.Profile{Name: "a", Command: "sh", Prompt: PromptArg,
		Args: []string{"-c", `printf '%s|%s' "$1" "$2"`, "sh", "--task={{prompt}}", "tail"}}, inv(t))
	if want := "--task=" + prompt + "|tail"; res.Signals.Stdout != want {
		t.Errorf("substituted arg: %q", res.Signals.Stdout)
	}
}

func TestConfigErrors(t *testing.T) {
	big := inv(t)
	big.Prompt = strings.Repeat("x", 200<<10)
	for name, c := range map[string]struct {
		p  agent.Profile
		in agent.Invocation
	}{
		"bad mode":            {agent.Profile{Command: "cat", Prompt: "pigeon"}, inv(t)},
		"prompt in stdin":     {agent.Profile{Command: "cat", Args: []string{"{{prompt}}"}}, inv(t)},
		"prompt_file in arg":  {agent.Profile{Command: "cat", Prompt: PromptArg, Args: []string{"{{prompt_file}}"}}, inv(t)},
		"arg prompt too long": {agent.Profile{Command: "cat", Prompt: PromptArg}, big},
	} {
		if _, err := New(c.p, nil).Run(context.Background(), c.in); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
}

func TestMissingBinary(t *testing.T) {
	res, err := New(agent.Profile{Name: "x", Command: "drover-no-such-agent"}, nil).Run(context.Background(), inv(t))
	if !errors.Is(err, proc.ErrNotFound) || res.Signals.ExitCode != -1 {
		t.Fatalf("err = %v, res = %+v", err, res)
	}
}

func TestEnvIsExplicitAndLayered(t *testing.T) {
	t.Setenv("DROVER_TEST_PARENT_SECRET", "leaked")
	in := inv(t)
	in.Env["LAYER"] = "invocation"
	p := agent.Profile{Command: "sh", Args: []string{"-c",
		`echo "secret=[$DROVER_TEST_PARENT_SECRET] layer=$LAYER only=$PROFILE_ONLY card=$DROVER_CARD_IDENTIFIER ws=$DROVER_WORKSPACE path_set=${PATH:+yes}"`},
		Env: map[string]string{"LAYER": "profile", "PROFILE_ONLY": "p"}}
	res := run(t, p, in)
	want := "secret=[] layer=invocation only=p card=DRV-42 ws=" + in.Workspace + " path_set=yes\n"
	if res.Signals.Stdout != want {
		t.Errorf("stdout %q\nwant   %q", res.Signals.Stdout, want)
	}
}

func TestTimeoutMapsToSignals(t *testing.T) {
	in := inv(t)
	in.Timeout = 200 * time.Millisecond
	res, err := New(agent.Profile{Command: "sh", Args: []string{"-c", "echo working; sleep 100"}}, nil).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Signals
	if s.KilledFor != "timeout" || !s.Signaled || s.ExitCode != -1 || s.Stdout != "working\n" || res.LastLine != "working" {
		t.Errorf("signals %+v, last line %q", s, res.LastLine)
	}
}

// countingParser counts lines as tokens and reports the last one it saw.
type countingParser struct {
	n    int64
	last string
}

func (c *countingParser) Feed(b []byte) { c.n++; c.last = "parsed: " + string(b) }
func (c *countingParser) Structured() policy.Structured {
	return policy.Structured{Present: true, TokensIn: c.n, ResultText: c.last}
}
func (c *countingParser) Progress() (string, int64, int64, float64) { return c.last, c.n, 2 * c.n, 0.5 }

// stderrParser is a countingParser that also reads stderr.
type stderrParser struct {
	countingParser
	stderr []string
}

func (c *stderrParser) FeedStderr(b []byte) { c.stderr = append(c.stderr, string(b)) }
func (c *stderrParser) Structured() policy.Structured {
	return policy.Structured{Present: true, ErrorMessages: c.stderr}
}

// TestParserReadsStderr: a parser that reads stderr gets every stderr line
// of the run, without its newline, as drover classify gives them.
func TestParserReadsStderr(t *testing.T) {
	p := agent.Profile{Command: "sh", Args: []string{"-c", `echo out; echo "first problem" >&2; echo "  status: 429" >&2; exit 3`}}
	res, err := New(p, func() agent.Parser { return &stderrParser{} }).Run(context.Background(), inv(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Signals.Structured.ErrorMessages; strings.Join(got, "|") != "first problem|  status: 429" {
		t.Errorf("stderr lines the parser read: %q", got)
	}
}

func TestParserAndThrottledProgress(t *testing.T) {
	in := inv(t)
	var mu sync.Mutex
	var got []agent.Progress
	in.Progress = func(p agent.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }
	// 200 lines over about a second.
	p := agent.Profile{Command: "sh", Args: []string{"-c", `i=0; while [ $i -lt 200 ]; do echo "line $i"; i=$((i+1)); [ $((i % 20)) -eq 0 ] && sleep 0.1; done`}}
	start := time.Now()
	res, err := New(p, func() agent.Parser { return &countingParser{} }).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	st := res.Signals.Structured
	if !st.Present || st.TokensIn != 200 || st.ResultText != "parsed: line 199" {
		t.Errorf("structured %+v", st)
	}
	if res.LastLine != "parsed: line 199" {
		t.Errorf("last line %q", res.LastLine)
	}
	mu.Lock()
	defer mu.Unlock()
	if max := int(elapsed/ProgressInterval) + 2; len(got) < 2 || len(got) > max {
		t.Errorf("%d progress calls in %s, want 2..%d", len(got), elapsed, max)
	}
	final := got[len(got)-1]
	if final.TokensIn != 200 || final.TokensOut != 400 || final.CostUSD != 0.5 || final.LastLine != "parsed: line 199" {
		t.Errorf("final progress %+v", final)
	}
}

// TestWiringSeesTheRunsEnv: a kind's MCP wiring gets the run's environment
// as the profile built it and the workspace, so it can merge with a
// variable the operator set; the variable it returns reaches the process.
func TestWiringSeesTheRunsEnv(t *testing.T) {
	in := inv(t)
	in.MCP = &agent.MCPServer{Name: "drover", Dir: t.TempDir()}
	var got agent.MCPServer
	wire := func(s agent.MCPServer) (agent.MCPWiring, error) {
		got = s
		v, _ := s.Getenv("OPERATOR_CFG")
		return agent.MCPWiring{Env: map[string]string{"OPERATOR_CFG": v + "+drover"}}, nil
	}
	p := agent.Profile{Command: "sh", Args: []string{"-c", `echo "cfg=$OPERATOR_CFG"`}, Env: map[string]string{"OPERATOR_CFG": "mine"}}
	res, err := NewWired(p, nil, wire).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != in.Workspace {
		t.Errorf("wiring saw workspace %q, want %q", got.Workspace, in.Workspace)
	}
	if res.Signals.Stdout != "cfg=mine+drover\n" {
		t.Errorf("stdout %q, want the operator's value merged by the wiring", res.Signals.Stdout)
	}
}
