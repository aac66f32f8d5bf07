package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/workspace"
)

// TestValidationErrors: each bad config is refused with an error that names
// the key path (and, where it helps, the fix).
func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"max_attempts zero", "policy: {max_attempts: 0}", []string{"policy.max_attempts: 0 is not allowed; use a positive number, or -1 for unbounded"}},
		{"max_attempts not a number", "policy: {max_attempts: lots}", []string{"policy.max_attempts", "whole number"}},
		{"failed_state missing column", "policy: {failed_state: stuck}", []string{`policy.failed_state: "stuck" is not a column on the board (columns: backlog, ready`}},
		{"failed_state not a sink", "policy: {failed_state: review}", []string{"policy.failed_state", "role completed", "blocked or cancelled"}},
		{"failed_state done", "policy: {failed_state: done}", []string{"policy.failed_state", "role done"}},
		{"unknown policy kind", "policy: {kinds: {netwrk: {cap: 2}}}", []string{"policy.kinds.netwrk", `did you mean "network"`, "use one of rate_limited"}},
		{"kind cap zero", "policy: {kinds: {network: {cap: 0}}}", []string{"policy.kinds.network.cap", "use 1 or more"}},
		{"kind tiers and backoff", "policy: {kinds: {network: {tiers: [1m], backoff: {base: 1s}}}}", []string{"policy.kinds.network", "keep one"}},
		{"negative tier", "policy: {kinds: {network: {tiers: [1m, -5s]}}}", []string{"policy.kinds.network.tiers[1]", "negative"}},
		{"negative duration", "policy: {backoff: {base: -1s}}", []string{"policy.backoff.base", "negative"}},
		{"duration without unit", "dispatch: {lease: 30}", []string{"dispatch.lease", "no unit"}},
		{"bad duration", "agents: {profiles: {c: {kind: claude, timeout: soon}}}", []string{"agents.profiles.c.timeout", "not a duration"}},
		{"jitter range", "policy: {backoff: {jitter: 2}}", []string{"policy.backoff.jitter", "0 to 1"}},
		{"max below base", "policy: {backoff: {base: 1m, max: 10s}}", []string{"policy.backoff.max", "less than base"}},
		{"churn cap", "policy: {release_churn_cap: 0}", []string{"policy.release_churn_cap"}},
		{"unknown policy key", "policy: {max_attempt: 3}", []string{"policy.max_attempt: unknown key", `did you mean "max_attempts"`}},
		{"unknown top-level typo", "polciy: {max_attempts: 3}", []string{"polciy: unknown key", `did you mean "policy"`}},
		{"active state missing", "tracker: {active_states: [ready, doing]}", []string{"tracker.active_states[1]", `"doing" is not a column`}},
		{"active state sink", "tracker: {active_states: [done]}", []string{"tracker.active_states[0]", "sink"}},
		{"terminal state missing", "tracker: {terminal_states: [finished]}", []string{"tracker.terminal_states[0]", `"finished"`}},
		{"by_state missing", "dispatch: {max_concurrent_by_state: {doing: 2}}", []string{"dispatch.max_concurrent_by_state.doing", "not a column"}},
		{"symphony by_state missing", "agent: {max_concurrent_agents_by_state: {doing: 2}}", []string{"agent.max_concurrent_agents_by_state.doing"}},
		{"tracker kind", "tracker: {kind: jira}", []string{"tracker.kind", `"jira"`, "native"}},
		{"linear needs a project", "tracker: {kind: linear, api_key: k, active_states: [Todo]}", []string{"tracker.provider.project_slug", "missing"}},
		{"github repo", "tracker: {kind: github, api_key: k, repo: acme}", []string{"tracker.repo", "owner/name"}},
		{"github blocked_by_pattern", "tracker: {kind: github, api_key: k, repo: a/b, blocked_by_pattern: 'blocked by #\\d+'}", []string{"tracker.blocked_by_pattern", "group"}},
		{"github role state", "tracker: {kind: github, api_key: k, repo: a/b, roles: {done: {state: merged}}}", []string{"tracker.roles.done.state", "open or closed"}},
		{"tracker role name", "tracker: {kind: github, api_key: k, repo: a/b, roles: {review: {label: x}}}", []string{"tracker.roles.review", "not a column role"}},
		{"two project slugs", "tracker: {kind: linear, api_key: k, project_slug: a, provider: {project_slug: b}, active_states: [Todo]}", []string{"tracker.provider.project_slug", "keep one"}},
		{"default names no profile", "agents: {default: claude, profiles: {sim: {kind: sim}}}", []string{`agents.default: "claude" is not a profile`, "use one of sim"}},
		{"default missing with several", "agents: {profiles: {a: {kind: sim}, b: {kind: sim}}}", []string{"agents.default: missing", "a, b"}},
		{"profile kind", "agents: {profiles: {x: {kind: gpt}}}", []string{"agents.profiles.x.kind", "command, claude, codex, gemini, opencode, sim"}},
		{"profile kind missing", "agents: {profiles: {x: {command: ./a}}}", []string{"agents.profiles.x.kind: missing"}},
		{"command required", "agents: {profiles: {x: {kind: command}}}", []string{"agents.profiles.x.command: missing"}},
		{"prompt mode", "agents: {profiles: {x: {kind: command, command: ./a, prompt: pipe}}}", []string{"agents.profiles.x.prompt", "stdin, file, arg"}},
		{"resume mode", "agents: {profiles: {x: {kind: claude, resume: always}}}", []string{"agents.profiles.x.resume", `"always" is not a resume mode`, "auto", "never"}},
		{"args mode", "agents: {profiles: {c: {kind: claude, args_mode: instead}}}", []string{"agents.profiles.c.args_mode", `"instead"`, "append", "replace"}},
		{"claude replacement without stream-json", "agents: {profiles: {c: {kind: claude, args_mode: replace, args: [-p, --model, x]}}}", []string{"agents.profiles.c.args: with args_mode: replace", "--output-format stream-json --verbose", "remove args_mode"}},
		{"codex replacement without exec", "agents: {profiles: {c: {kind: codex, args_mode: replace, args: [--json, '-']}}}", []string{"agents.profiles.c.args", "drops exec", "stdin is not a terminal"}},
		{"env_passthrough name", "agents: {profiles: {c: {kind: claude, env_passthrough: [MY_KEY, 'A-B']}}}", []string{"agents.profiles.c.env_passthrough", `"A-B" is not an environment variable name`}},
		{"profile name", "agents: {profiles: {My_Agent: {kind: sim}}}", []string{"agents.profiles.My_Agent", "not a profile name"}},
		{"unknown profile key", "agents: {profiles: {x: {kind: sim, comand: a}}}", []string{"agents.profiles.x.comand: unknown key", `"command"`}},
		{"spec_schema invalid", "agents: {profiles: {x: {kind: sim, spec_schema: {type: 12}}}}", []string{"agents.profiles.x.spec_schema", "not a valid JSON Schema"}},
		{"spec_schema remote ref", "agents: {profiles: {x: {kind: sim, spec_schema: {$ref: 'https://example.com/s.json'}}}}", []string{"agents.profiles.x.spec_schema"}},
		{"match regex", "agents: {profiles: {x: {kind: sim, match: [{regex: '(', kind: network}]}}}", []string{"agents.profiles.x.match[0].regex", "does not compile"}},
		{"match kind", "agents: {profiles: {x: {kind: sim, match: [{regex: 'x', kind: netwrk}]}}}", []string{"agents.profiles.x.match[0].kind"}},
		{"cleanup", "workspace: {cleanup: always}", []string{"workspace.cleanup", "never, on_done, on_sink"}},
		{"workspace root is /", "workspace: {root: /}", []string{"workspace.root", `"/" is the filesystem root`, ".drover/workspaces"}},
		{"workspace root is the config dir", "workspace: {root: .}", []string{"workspace.root", "/srv/proj", "directory of their own"}},
		{"workspace root above the config dir", "workspace: {root: /srv}", []string{"workspace.root", "/srv", "directory of their own"}},
		{"board role", "board: {columns: [{name: ready, role: go}]}", []string{"board.columns[0].role"}},
		{"board lacks blocked", "board: {columns: [{name: ready, role: eligible}, {name: doing, role: running}, {name: done, role: done}]}", []string{"board.columns", `role "blocked"`}},
		{"board unknown key", "board: {colums: []}", []string{"board.colums: unknown key", `"columns"`}},
		{"server port", "server: {port: 70000}", []string{"server.port", "1-65535"}},
		{"notify url", "notify: {slack: {url: 'not a url'}}", []string{"notify.slack.url", "http(s) URL"}},
		{"notify event", "notify: {slack: {url: 'https://x.test/h', events: [blocked, exploded]}}", []string{"notify.slack.events[1]", `"exploded"`}},
		{"negative spend", "limits: {max_cost_per_day_usd: -5}", []string{"limits.max_cost_per_day_usd", "negative"}},
		{"negative estimate", "limits: {estimated_cost_per_run_usd: -1}", []string{"limits.estimated_cost_per_run_usd", "average of recent runs"}},
		{"day boundary", "limits: {day_boundary: '25:00'}", []string{"limits.day_boundary"}},
		{"day boundary zone", "limits: {day_boundary: '06:00 Mars/Olympus'}", []string{"limits.day_boundary", "Mars/Olympus"}},
		{"hooks both timeouts", "hooks: {timeout: 10s, timeout_ms: 1000}", []string{"hooks.timeout_ms", "keep one"}},
		{"dispatch and polling", "dispatch: {poll_interval: 1s}\npolling: {interval_ms: 1000}", []string{"polling.interval_ms", "dispatch.poll_interval"}},
		{"max concurrent", "agent: {max_concurrent_agents: 0}", []string{"agent.max_concurrent_agents", "1 or more"}},
		{"lease too short", "dispatch: {lease: 1s}", []string{"dispatch.lease", "at least 3s"}},
		{"store", "store: mysql://x", []string{"store", "sqlite:PATH"}},
		{"section not a map", "policy: [1, 2]", []string{"policy: must be a mapping"}},
		{"duplicate key", "policy: {max_attempts: 3}\npolicy: {max_attempts: 4}", []string{"policy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("---\n"+tc.yaml+"\n---\nhello\n"), "/srv/proj")
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestErrorLines(t *testing.T) {
	_, err := Parse([]byte("---\nboard:\n  prefix: DRV\npolicy:\n  max_attempts: 0\n---\n"), "/x")
	e, ok := err.(*Error)
	if !ok || len(e.Problems) != 1 || e.Problems[0].Line != 5 || e.Problems[0].Path != "policy.max_attempts" {
		t.Fatalf("err = %#v", err)
	}
}

func TestFileErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"no front matter", "Just a prompt {{ card.title }}\n", "no YAML front matter"},
		{"unclosed", "---\npolicy: {}\n", "not closed"},
		{"yaml syntax", "---\nboard:\n  prefix: [DRV\n---\n", "invalid YAML"},
		{"yaml tab", "---\npolicy:\n\tmax_attempts: 3\n---\n", "line 3"},
		{"not a mapping", "---\n- a\n- b\n---\n", "must be YAML keys"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.src), "/x")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "WORKFLOW.md")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "drover init") {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(path, []byte("---\npolicy: {max_attempts: 0}\n---\n"), 0o644)
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+":2: policy.max_attempts") {
		t.Errorf("Load error should start with file:line: %v", err)
	}
}

func TestIgnoredKeysWarn(t *testing.T) {
	cfg := mustParse(t, "---\nfoo_bar: 1\ntracker: {assignee: me}\nserver: {port: 0, tls: true}\n---\n")
	want := map[string]bool{"foo_bar": true, "tracker.assignee": true, "server.tls": true}
	for _, k := range cfg.Ignored {
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("not reported as ignored: %v (got %v)", want, cfg.Ignored)
	}
}

func TestOverrides(t *testing.T) {
	cfg := mustParse(t, `---
policy:
  max_attempts: -1
  backoff: {base: 2s}
  kinds:
    network: {cap: 5}
    rate_limited: {cap: -1}
    timeout: {backoff: {base: 30s, max: 10m}}
agent: {max_retry_backoff_ms: 60000}
hooks: {timeout_ms: 1500}
dispatch: {node: n1, lease: 9s}
workspace: {root: /abs/ws, cleanup: on_sink}
store: sqlite:state/d.db
board:
  prefix: OPS
  columns:
    - {name: todo, role: eligible}
    - {name: doing, role: running}
    - {name: done, role: done}
    - {name: stuck, role: blocked}
policy_note: x
---
`)
	p := cfg.Policy
	if p.MaxAttempts != -1 || p.Backoff.Base != 2*time.Second || p.Backoff.Max != time.Minute {
		t.Errorf("policy = %+v", p)
	}
	if p.FailedState != "stuck" {
		t.Fatalf("failed_state = %q", p.FailedState)
	}
	n := p.Kinds["network"]
	if *n.Cap != 5 || len(n.Tiers) != 3 {
		t.Errorf("network keeps default tiers with a new cap: %+v", n)
	}
	if r := p.Kinds["rate_limited"]; *r.Cap != -1 || p.Cap("rate_limited") != policy.NoCap {
		t.Errorf("rate_limited: cap -1 is no cap: %+v", r)
	}
	if to := p.Kinds["timeout"]; to.Backoff == nil || to.Backoff.Base != 30*time.Second || to.Backoff.Max != 10*time.Minute {
		t.Errorf("timeout = %+v", to)
	}
	if cfg.Hooks.Timeout != 1500*time.Millisecond || cfg.Dispatch.Node != "n1" || cfg.Dispatch.Lease != 9*time.Second {
		t.Errorf("hooks/dispatch = %+v %+v", cfg.Hooks, cfg.Dispatch)
	}
	if cfg.Workspace.Root != "/abs/ws" || cfg.Workspace.Cleanup != workspace.CleanupOnSink || cfg.Store.DSN != "sqlite:/srv/proj/state/d.db" {
		t.Errorf("workspace/store = %+v %+v", cfg.Workspace, cfg.Store)
	}
	if strings.Join(cfg.Tracker.ActiveStates, ",") != "todo,doing" {
		t.Errorf("active = %v", cfg.Tracker.ActiveStates)
	}
}

// TestProfileArgsAndPassthrough: a profile's args, args_mode and
// env_passthrough are read as given (the registry adds the defaults).
func TestProfileArgsAndPassthrough(t *testing.T) {
	cfg, err := Parse([]byte("---\nagents:\n  default: c\n  profiles:\n    c: {kind: claude, args: [--model, x], env_passthrough: [MY_PROXY_TOKEN]}\n    r: {kind: claude, args_mode: replace, args: [-p, --output-format, json]}\n---\nhello\n"), "/srv/proj")
	if err != nil {
		t.Fatal(err)
	}
	c, r := cfg.Agents.Profiles["c"], cfg.Agents.Profiles["r"]
	if strings.Join(c.Args, " ") != "--model x" || c.ArgsMode != "" || strings.Join(c.EnvPassthrough, " ") != "MY_PROXY_TOKEN" {
		t.Errorf("c = %+v", c)
	}
	if r.ArgsMode != "replace" || strings.Join(r.Args, " ") != "-p --output-format json" {
		t.Errorf("r = %+v", r)
	}
}

// TestSymphonyCodexCommand: Symphony's codex.command keeps working now that
// profile args follow the kind's defaults: "codex exec …" is the whole
// line, other flags are added after drover's.
func TestSymphonyCodexCommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"codex exec --json --model o3 -": "replace:exec --json --model o3 -",
		"codex --model o3":               ":--model o3",
	} {
		cfg, err := Parse([]byte("---\ncodex: {command: '"+cmd+"'}\n---\nhello\n"), "/srv/proj")
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		p := cfg.Agents.Profiles["codex"]
		if got := p.ArgsMode + ":" + strings.Join(p.Args, " "); got != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
	if _, err := Parse([]byte("---\ncodex: {command: 'codex exec --model o3'}\n---\nhello\n"), "/srv/proj"); err == nil || !strings.Contains(err.Error(), "codex.command") || !strings.Contains(err.Error(), "--json") {
		t.Errorf("codex exec without --json: %v", err)
	}
}

// TestCodexAppServerKeys: a codex profile in app-server mode takes
// Symphony's approval and sandbox keys; a bad value is refused naming the
// field and the values codex takes; another kind, or exec mode, does not
// read them and says so.
func TestCodexAppServerKeys(t *testing.T) {
	prof := func(body string) string {
		return "---\nagents:\n  profiles:\n    cx: {" + body + "}\n---\nhello\n"
	}
	cfg, err := Parse([]byte(prof("kind: codex, args: [app-server], approval_policy: {granular: {sandbox_approval: true}}, thread_sandbox: read-only, turn_sandbox_policy: {type: readOnly, networkAccess: false}")), "/srv/proj")
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Agents.Profiles["cx"]
	ap, _ := p.ApprovalPolicy.(map[string]any)
	tsp, _ := p.TurnSandboxPolicy.(map[string]any)
	if ap["granular"] == nil || p.ThreadSandbox != "read-only" || tsp["type"] != "readOnly" || len(cfg.Ignored) != 0 {
		t.Errorf("profile %+v, ignored %v", p, cfg.Ignored)
	}
	for body, want := range map[string]string{
		"kind: codex, args: [app-server], approval_policy: sometimes":         `agents.profiles.cx.approval_policy: "sometimes" is not an approval policy; use one of untrusted, on-request, never`,
		"kind: codex, args: [app-server], thread_sandbox: rw":                 `agents.profiles.cx.thread_sandbox: "rw" is not a sandbox mode`,
		"kind: codex, args: [app-server], turn_sandbox_policy: workspace":     `agents.profiles.cx.turn_sandbox_policy: "workspace" is not a sandbox policy`,
		"kind: codex, args: [app-server], turn_sandbox_policy: {type: bogus}": `agents.profiles.cx.turn_sandbox_policy:`,
		"kind: claude, approval_policy: never":                                `agents.profiles.cx.approval_policy: only a codex profile in app-server mode reads it`,
	} {
		_, err := Parse([]byte(prof(body)), "/srv/proj")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", body, err, want)
		}
	}
	cfg, err = Parse([]byte(prof("kind: codex, approval_policy: never")), "/srv/proj")
	if err != nil || len(cfg.Ignored) != 1 || cfg.Ignored[0] != "agents.profiles.cx.approval_policy" {
		t.Errorf("exec mode: err %v, ignored %v", err, cfg.Ignored)
	}
	cfg, err = Parse([]byte("---\ncodex: {command: 'codex exec --json', approval_policy: never}\n---\nhello\n"), "/srv/proj")
	if err != nil || !slices.Contains(cfg.Ignored, "codex.approval_policy") {
		t.Errorf("codex exec: err %v, ignored %v", err, cfg.Ignored)
	}
	// Beside profiles of the file's own, no key of codex: is used, and each says so.
	cfg, err = Parse([]byte("---\nagents: {profiles: {a: {kind: sim}}}\ncodex: {command: codex, turn_timeout_ms: 5000, thread_sandbox: rw}\n---\nhello\n"), "/srv/proj")
	if err != nil || strings.Join(cfg.Ignored, " ") != "codex.command codex.turn_timeout_ms codex.thread_sandbox" {
		t.Errorf("codex: beside profiles: err %v, ignored %v", err, cfg.Ignored)
	}
}
