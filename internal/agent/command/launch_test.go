package command

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
)

func TestEnvPassthroughReachesTheAgent(t *testing.T) {
	t.Setenv("DROVER_TEST_KEY", "k-123")
	t.Setenv("DROVER_TEST_NOT_PASSED", "x")
	p := agent.Profile{Name: "e", Command: "sh", Args: []string{"-c", `echo "$DROVER_TEST_KEY|$DROVER_TEST_NOT_PASSED|$DROVER_TEST_UNSET"`},
		EnvPassthrough: []string{"DROVER_TEST_KEY", "DROVER_TEST_UNSET"}}
	res := run(t, p, inv(t))
	if got := strings.TrimSpace(res.Signals.Stdout); got != "k-123||" {
		t.Errorf("agent saw %q, want only the passed-through variable", got)
	}
}

func TestLaunchIsRecordedAndLoggedFirst(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-abcdefghijklmnop")
	in := inv(t)
	var got agent.Launch
	in.Started = func(l agent.Launch) { got = l }
	p := agent.Profile{Name: "l", Command: "sh", Prompt: PromptArg, EnvPassthrough: []string{"ANTHROPIC_API_KEY"},
		Env:  map[string]string{"MY_TOKEN": "tok-value-1"},
		Args: []string{"-c", `echo ok`, "--api-key", "plain-secret", "--token=abc", "API_KEY=v", "tok-value-1", "--model", "x", "{{prompt}}"}}
	res, err := New(p, nil).Run(context.Background(), in)
	if err != nil || res.Signals.ExitCode != 0 {
		t.Fatalf("run: %v %+v", err, res.Signals)
	}
	want := []string{"sh", "-c", "echo ok", "--api-key", Redacted, "--token=" + Redacted, "API_KEY=" + Redacted, Redacted, "--model", "x", "{{prompt}}"}
	if !slices.Equal(got.Argv, want) {
		t.Errorf("argv %q\nwant %q", got.Argv, want)
	}
	for _, name := range []string{"ANTHROPIC_API_KEY", "MY_TOKEN", "DROVER_CARD_IDENTIFIER", "PATH"} {
		if !slices.Contains(got.EnvNames, name) {
			t.Errorf("env names %q lack %s", got.EnvNames, name)
		}
	}
	data, err := os.ReadFile(in.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	if !strings.HasPrefix(first, "[drover: run: sh -c \"echo ok\" --api-key [redacted]") || !strings.Contains(first, "env: ") || !strings.Contains(first, "ANTHROPIC_API_KEY") {
		t.Errorf("first log line %q", first)
	}
	for _, secret := range []string{"sk-ant-abcdefghijklmnop", "plain-secret", "tok-value-1", "second line"} {
		if strings.Contains(first, secret) || slices.Contains(got.Argv, secret) {
			t.Errorf("%q is recorded", secret)
		}
	}
}

func TestDescribeRedactsCredentialShapes(t *testing.T) {
	l := Describe(agent.Profile{}, agent.Invocation{}, proc.Spec{Path: "x", Args: []string{"--header", "Authorization: Bearer abc.def", "ghp_abcdefghijklmnopqrstu", "--verbose", "--auth", "--model", "m"}})
	want := []string{"x", "--header", "Authorization: " + Redacted, Redacted, "--verbose", "--auth", "--model", "m"}
	if !slices.Equal(l.Argv, want) {
		t.Errorf("argv %q\nwant %q", l.Argv, want)
	}
}
