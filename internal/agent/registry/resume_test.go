package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// argv is the argument list drover would run for p resuming session id
// (nil when it would start a new session).
func argv(t *testing.T, p agent.Profile, id string) []string {
	t.Helper()
	r, ok := Resume(p, id)
	if !ok {
		return nil
	}
	spec, err := command.BuildSpec(r, agent.Invocation{Prompt: "the answer", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return spec.Args
}

// TestResumeArgv: the run after a human's answer continues the agent's own
// session, with the kind's flags for it, where the kind and the profile
// allow it; otherwise it starts a new session.
func TestResumeArgv(t *testing.T) {
	cases := []struct {
		name string
		p    agent.Profile
		want string // "" = a new session
	}{
		{"claude defaults", agent.Profile{Kind: "claude", Prompt: "stdin"}, "-p --output-format stream-json --verbose --resume sess-1"},
		{"claude with max turns", agent.Profile{Kind: "claude", Prompt: "stdin", MaxTurns: 7}, "-p --output-format stream-json --verbose --max-turns 7 --resume sess-1"},
		{"claude resume auto", agent.Profile{Kind: "claude", Resume: agent.ResumeAuto}, "-p --output-format stream-json --verbose --resume sess-1"},
		{"claude resume never", agent.Profile{Kind: "claude", Resume: agent.ResumeNever}, ""},
		{"claude profile picks its session", agent.Profile{Kind: "claude", Args: []string{"-p", "--continue"}}, ""},
		{"claude keeps no sessions", agent.Profile{Kind: "claude", Args: []string{"-p", "--no-session-persistence"}}, ""},
		{"codex defaults", agent.Profile{Kind: "codex", Prompt: "stdin"}, "exec resume --json --skip-git-repo-check sess-1 -"},
		// A profile's args follow the kind's defaults (args_mode: append).
		{"codex with a model", agent.Profile{Kind: "codex", Args: []string{"-m", "o3", "--config=x=1"}}, "exec resume --json --skip-git-repo-check -m o3 --config=x=1 sess-1 -"},
		{"codex replaced args", agent.Profile{Kind: "codex", ArgsMode: agent.ArgsReplace, Args: []string{"exec", "--json", "-m", "o3", "-"}}, "exec resume --json -m o3 sess-1 -"},
		{"codex option resume lacks", agent.Profile{Kind: "codex", Args: []string{"--sandbox", "workspace-write"}}, ""},
		{"codex ephemeral", agent.Profile{Kind: "codex", Args: []string{"--ephemeral"}}, ""},
		{"codex prompt as argument", agent.Profile{Kind: "codex", Prompt: "arg", Args: []string{"exec", "--json"}}, ""},
		{"gemini defaults", agent.Profile{Kind: "gemini"}, "--output-format stream-json --skip-trust --yolo --resume sess-1"},
		{"gemini with a model", agent.Profile{Kind: "gemini", Args: []string{"-m", "gemini-2.5-pro"}}, "--output-format stream-json --skip-trust --yolo -m gemini-2.5-pro --resume sess-1"},
		{"gemini resume never", agent.Profile{Kind: "gemini", Resume: agent.ResumeNever}, ""},
		{"gemini profile picks its session", agent.Profile{Kind: "gemini", Args: []string{"--resume=latest"}}, ""},
		{"gemini profile names a new session", agent.Profile{Kind: "gemini", Args: []string{"--session-id", "0b6c…"}}, ""},
		{"opencode defaults", agent.Profile{Kind: "opencode"}, "run --format json --session sess-1"},
		{"opencode with a model", agent.Profile{Kind: "opencode", Args: []string{"-m", "fake/gpt"}}, "run --format json -m fake/gpt --session sess-1"},
		{"opencode resume never", agent.Profile{Kind: "opencode", Resume: agent.ResumeNever}, ""},
		{"opencode profile picks its session", agent.Profile{Kind: "opencode", Args: []string{"--continue"}}, ""},
		{"opencode profile forks", agent.Profile{Kind: "opencode", Args: []string{"--fork"}}, ""},
		{"opencode prompt as argument", agent.Profile{Kind: "opencode", Prompt: "arg"}, ""},
		{"command kind", agent.Profile{Kind: "command", Command: "./agent.sh"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(argv(t, tc.p, "sess-1"), " ")
			if got != tc.want {
				t.Errorf("argv %q, want %q", got, tc.want)
			}
		})
	}
	if _, ok := Resume(agent.Profile{Kind: "claude"}, ""); ok {
		t.Error("resumed without a session id")
	}
}

// TestResumeLeavesTheProfile: resuming does not change the profile's own
// arguments (a later fresh run gets them unchanged).
func TestResumeLeavesTheProfile(t *testing.T) {
	args := []string{"exec", "--json", "-"}
	p := agent.Profile{Kind: "codex", Args: args}
	Resume(p, "s")
	if !slices.Equal(p.Args, []string{"exec", "--json", "-"}) || !slices.Equal(args, []string{"exec", "--json", "-"}) {
		t.Errorf("profile args changed: %v", p.Args)
	}
}

// TestResumeRefusesAHostileSessionID: the session id comes from the agent's
// own output, and drover puts it in the next run's argv. One that could be
// read as an option ("--dangerously-skip-permissions" after --resume), or is
// not a plain token (a path, spaces, shell metacharacters, control
// characters, a huge line), starts a new session instead.
func TestResumeRefusesAHostileSessionID(t *testing.T) {
	for _, id := range []string{
		"--dangerously-skip-permissions", "-c", "../../etc/passwd", "a/b", "x; rm -rf ~", "$(id)",
		"a b", "sess\n--yolo", "sess\x00", "s\xff", strings.Repeat("a", 300),
	} {
		for _, kind := range []string{"claude", "codex", "gemini", "opencode"} {
			if got := argv(t, agent.Profile{Kind: kind}, id); got != nil {
				t.Errorf("%s resumed session %q: argv %q; want a new session", kind, id, got)
			}
		}
	}
	for _, id := range []string{"019a4b3c-1d2e-7f00-8a9b-0c1d2e3f4a5b", "ses_5f0c1d2e3AThUQ1JBJ", "thread.1:2"} {
		if argv(t, agent.Profile{Kind: "claude"}, id) == nil {
			t.Errorf("session %q was not resumed", id)
		}
	}
}
