package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblemsNamePathLineAndFix: for a bad value of each section (a wrong
// type, an unknown key, a typo, an out-of-range number, a wrong shape) the
// problem names the key path, the file line it is on and the fix. The YAML
// is written a key a line (the front matter starts on line 2).
func TestProblemsNamePathLineAndFix(t *testing.T) {
	cases := []struct {
		yaml string
		line int
		path string
		fix  string
	}{
		{"board:\n  prefix: DRV\n  colums: []", 4, "board.colums", `unknown key (did you mean "columns"?); valid keys here: prefix, columns`},
		{"board:\n  columns:\n    - name: ready\n      role: eligble", 5, "board.columns[0].role", "is not one of inactive, eligible"},
		{"board:\n  columns: {ready: eligible}", 3, "board.columns", "must be a list of {name, role}, not a mapping"},
		{"agents:\n  profiles:\n    c:\n      kind: claude\n      timeout: soon", 6, "agents.profiles.c.timeout", "use Go syntax such as 250ms"},
		{"agents:\n  profiles:\n    c:\n      kind: claud", 5, "agents.profiles.c.kind", `(did you mean "claude"?); use one of command, claude`},
		{"agents:\n  profiles:\n    c:\n      kind: claude\n      max_log_bytes: lots", 6, "agents.profiles.c.max_log_bytes", `"lots" is not a whole number (e.g. 10)`},
		{"agents:\n  profiles:\n    c:\n      kind: claude\n      env:\n        TOKEN: [a]", 7, "agents.profiles.c.env.TOKEN", "must be a string, not a list"},
		{"agents:\n  profiles:\n    c:\n      kind: claude\n      verify:\n        timeout: 0s", 7, "agents.profiles.c.verify.timeout", "use a positive duration"},
		{"agents:\n  profiles:\n    c:\n      kind: sim\n      match:\n        - name: x\n          kind: network", 7, "agents.profiles.c.match[0].regex", "the rule matches nothing; give a regex, an exit_code or both"},
		{"agents:\n  profiles:\n    c:\n      kind: sim\n      match:\n        - regex: x\n          kind: netwrk", 8, "agents.profiles.c.match[0].kind", `"netwrk" is not a failure kind (did you mean "network"?)`},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n      fallback: [d]", 7, "agents.profiles.c.fallback[0]", `"d" is not a profile`},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n      fallback: [c]", 7, "agents.profiles.c.fallback[0]", "is c itself; a fallback is another profile"},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n      fallback: [d]\n    d:\n      kind: sim\n      takes_fallback: false", 7, "agents.profiles.c.fallback[0]", "d takes no other profile's cards (takes_fallback: false)"},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n      max_concurrent: 0", 7, "agents.profiles.c.max_concurrent", "give 1 or more, or remove the key for no cap"},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n  routes:\n    - profile: c", 8, "agents.routes[0].labels", "missing; give the labels whose cards this route sends"},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n  routes:\n    - labels: [docs]\n      profile: e", 9, "agents.routes[0].profile", `"e" is not a profile`},
		{"agents:\n  default: c\n  profiles:\n    c:\n      kind: sim\n  rotues: []", 7, "agents.rotues", `did you mean "routes"`},
		{"policy:\n  max_attempts: 2.5", 3, "policy.max_attempts", `"2.5" is not a whole number`},
		{"policy:\n  max_attempts: \"3\"", 3, "policy.max_attempts", `"3" is not a whole number`},
		{"policy:\n  backoff:\n    jitter: 1.5", 4, "policy.backoff.jitter", "use a fraction from 0 to 1"},
		{"policy:\n  backoff:\n    jitter: .nan", 4, "policy.backoff.jitter", "is not a number"},
		{"policy:\n  kinds:\n    network:\n      tiers:\n        - 1m\n        - soon", 7, "policy.kinds.network.tiers[1]", "is not a duration"},
		{"policy:\n  kinds:\n    timeout:\n      backoff:\n        base: 1m\n        max: 30s", 7, "policy.kinds.timeout.backoff.max", "less than base"},
		{"policy:\n  breaker:\n    treshold: 2", 4, "policy.breaker.treshold", `did you mean "threshold"`},
		{"policy:\n  correlation:\n    cards: 1", 4, "policy.correlation.cards", "use 2 or more, or -1 to turn it off"},
		{"policy:\n  breaker:\n    window: 0s", 4, "policy.breaker.window", "use a positive duration (default 5m)"},
		{"policy:\n  kinds:\n    agent_failed:\n      cap: 3", 5, "policy.kinds.agent_failed.cap", "counts toward policy.max_attempts; set that instead"},
		{"policy:\n  kinds:\n    refused:\n      tiers: [1m]", 4, "policy.kinds.refused", "so a schedule has no effect"},
		{"limits:\n  max_cost_per_card_usd: -2", 3, "limits.max_cost_per_card_usd", "use 0 for no limit"},
		{"limits:\n  day_boundary: '6am'", 3, "limits.day_boundary", "write HH:MM"},
		{"notify:\n  allow_private: yes", 3, "notify.allow_private", "is not true or false"},
		{"notify:\n  webhook:\n    url: 'https://x.test/h'\n    events: [blocked, gaveup]", 5, "notify.webhook.events[1]", `did you mean "gave_up"`},
		{"workspace:\n  cleanup: on_sinc", 3, "workspace.cleanup", `(did you mean "on_sink"?); use one of never, on_done, on_sink`},
		{"workspace:\n  clenup: never", 3, "workspace.clenup", `unknown key (did you mean "cleanup"?)`},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    commit: both", 5, "workspace.git.commit", `"both" is not one of drover, agent`},
		{"workspace:\n  git:\n    base: main", 3, "workspace.git.repo", "is required: the repository's URL"},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    branch: '{{ card.nope }}'", 5, "workspace.git.branch", "nope"},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    base: 'a..b'", 5, "workspace.git.base", "is not a branch name git accepts"},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    token_env: 'ghp_x y'", 5, "workspace.git.token_env", "never the token"},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    comit: agent", 5, "workspace.git.comit", `unknown key (did you mean "commit"?)`},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    pull_request:\n      provider: gitlab\n      repo: acme/w", 6, "workspace.git.pull_request.provider", `"gitlab" is not one of github`},
		{"workspace:\n  git:\n    repo: /tmp/r.git\n    pull_request:\n      repo: widgets", 6, "workspace.git.pull_request.repo", "is not owner/name"},
		{"hooks:\n  timeout_ms: 1.5", 3, "hooks.timeout_ms", "is not a whole number of milliseconds"},
		{"hooks:\n  timeout: 5s\n  timeout_ms: 5000", 4, "hooks.timeout_ms", "is set together with hooks.timeout; keep one"},
		{"dispatch:\n  lease: 30", 3, "dispatch.lease", "has no unit; write e.g. 30s or 30ms"},
		{"dispatch:\n  max_concurrent_by_state:\n    doing: 2", 4, "dispatch.max_concurrent_by_state.doing", "is not a column on the board"},
		{"polling:\n  interval_ms: 50", 3, "polling.interval_ms", "poll at most every 100ms"},
		{"agent:\n  max_concurrent_agents: 0", 3, "agent.max_concurrent_agents", "use 1 or more"},
		{"agent:\n  max_concurrent_agents_by_state:\n    doing: 2", 4, "agent.max_concurrent_agents_by_state.doing", "is not a column on the board"},
		{"tracker:\n  kind: github\n  repo: acme\n  api_key: k", 4, "tracker.repo", "is not owner/name"},
		{"tracker:\n  kind: github\n  repo: a/b\n  api_key: k\n  roles:\n    done:\n      stat: closed", 8, "tracker.roles.done.stat", `did you mean "state"`},
		{"tracker:\n  kind: linear\n  active_states: [Todo]\n  api_key: k", 2, "tracker.provider.project_slug", "missing; name the Linear project"},
		{"tracker:\n  active_states:\n    - ready\n    - doing", 5, "tracker.active_states[1]", `"doing" is not a column on the board`},
		{"store:\n  dsnn: x", 3, "store.dsnn", `unknown key (did you mean "dsn"?)`},
		{"store: mysql://x", 2, "store", "use sqlite:PATH or postgres://USER@HOST/DB"},
		{"server:\n  port: 70000", 3, "server.port", "use 1-65535, or 0 to turn the server off"},
		{"server:\n  prot: 4840", 3, "server.prot", `unknown key (did you mean "port"?)`},
		{"codex:\n  command: codex app-server\n  thread_sandbox: rw", 4, "codex.thread_sandbox", "use one of read-only, workspace-write, danger-full-access"},
		{"codex:\n  command: codex\n  turn_timeout_ms: 1h", 4, "codex.turn_timeout_ms", "is not a whole number of milliseconds"},
		{"retention:\n  events: 90s", 3, "retention.events", "shorter than an hour (a slip for days?)"},
		{"retention:\n  runs: 5", 3, "retention.runs", "has no unit; write e.g. 5d"},
		{"verify:\n  commands:\n    - make\n    - ''", 5, "verify.commands[1]", "is empty; give a shell command"},
		{"verify: [make]", 2, "verify", "must be a mapping of keys (commands, timeout), not a list"},
		{"policy:\n  max_attempts: 3\npolicy:\n  max_attempts: 4", 4, "policy", "appears twice; keep one"},
		{"agents:\n  profiles:\n    a: {kind: sim}\n    a: {kind: sim}", 5, "agents.profiles.a", "appears twice; keep one"},
		{"polciy:\n  max_attempts: 3", 2, "polciy", `unknown key (did you mean "policy"?)`},
		{"workspace:\n  root: $DROVER_T_UNSET", 3, "workspace.root", "refers to $DROVER_T_UNSET, which is not set; export it"},
	}
	for _, c := range cases {
		_, err := Parse([]byte("---\n"+c.yaml+"\n---\nhi\n"), "/srv/proj")
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: accepted (or not a config error: %v)", c.yaml, err)
			continue
		}
		found := false
		for _, p := range e.Problems {
			found = found || p.Path == c.path && p.Line == c.line && strings.Contains(p.Msg, c.fix)
		}
		if !found {
			t.Errorf("%q:\n got %v\nwant line %d: %s: …%s…", c.yaml, err, c.line, c.path, c.fix)
		}
	}
}

// TestSeveralProblemsTogether: every problem of a file is reported, in file
// order, not just the first; a value that cannot be read is not reported a
// second time by the checks that follow from it.
func TestSeveralProblemsTogether(t *testing.T) {
	_, err := Parse([]byte("---\npolicy:\n  max_attempts: 0\n  kinds:\n    network:\n      tiers: 1m\nserver:\n  port: -1\nhooks:\n  timeout_ms: 1.5\n---\n"), "/x")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, p := range e.Problems {
		got = append(got, p.Path)
	}
	if want := "policy.max_attempts policy.kinds.network.tiers server.port hooks.timeout_ms"; strings.Join(got, " ") != want {
		t.Errorf("problems %q\nwant      %q\n(%v)", got, want, err)
	}
}

// TestBadFiles: what is not YAML, or too big to be settings, is refused
// naming the line and the fix.
func TestBadFiles(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
		want string
	}{
		{"---\nboard:\n  prefix: D\xffRV\n---\n", 3, "invalid UTF-8 (byte 0xff); save the file as UTF-8"},
		{"---\npolicy:\n  max_attempts: [3\n---\n", 2, "invalid YAML: did not find expected ',' or ']'"},
	} {
		_, err := Parse([]byte(c.src), "/x")
		var e *Error
		if !errors.As(err, &e) || e.Problems[0].Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: err = %v, want line %d and %q", c.src, err, c.line, c.want)
		}
	}
	// Aliases can make a small file hold millions of values: 300 profiles
	// of one with 1,000 variables are 300,000; drover stops at 100,000.
	bomb := "---\nx: &p\n  kind: sim\n  env:\n"
	for i := range 1000 {
		bomb += fmt.Sprintf("    V%d: v\n", i)
	}
	bomb += "agents:\n  default: p0\n  profiles:\n"
	for i := range 300 {
		bomb += fmt.Sprintf("    p%d: *p\n", i)
	}
	_, err := Parse([]byte(bomb+"---\n"), "/x")
	if err == nil || !strings.Contains(err.Error(), "holds over 100000 values") {
		t.Errorf("alias bomb: %.300v", err)
	}
	// A large file of settings loads; a larger one than MaxFileSize is refused.
	big := "---\n" + strings.Repeat("# settings\n", (MaxFileSize-10)/11) + "---\n"
	if _, err := Parse([]byte(big), "/x"); err != nil {
		t.Errorf("a large but valid file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "WORKFLOW.md")
	os.WriteFile(path, []byte(big+strings.Repeat("x", 100)), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than 4194304 bytes") {
		t.Errorf("a file over MaxFileSize: %v", err)
	}
	// A file of many bad values reports the first 50 problems and how many
	// more there are.
	many := "---\nagents:\n  profiles:\n    a:\n      kind: sim\n      env_passthrough:\n" + strings.Repeat("        - 'A-B'\n", 5000)
	_, err = Parse([]byte(many+"---\n"), "/x")
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 51 || e.Problems[50].Msg != "and 4950 more problems" {
		t.Errorf("many problems: %d, last %v", len(e.Problems), e.Problems[len(e.Problems)-1])
	}
}

// TestLenientSections: in the sections Symphony shares (and at the top) a
// key drover does not know is reported as ignored with a warning, unless it
// looks like a typo of one it knows; in drover's own it is an error.
func TestLenientSections(t *testing.T) {
	cfg := mustParse(t, "---\nfoo: 1\ntracker:\n  assignee: me\n  provider:\n    team: x\ncodex:\n  personality: terse\nhooks:\n  on_start: x\npolling:\n  jitter_ms: 5\n---\n")
	want := "foo tracker.assignee tracker.provider.team codex.personality hooks.on_start polling.jitter_ms"
	if got := strings.Join(cfg.Ignored, " "); got != want {
		t.Errorf("ignored %q, want %q", got, want)
	}
	if len(cfg.Warnings) != 6 || !strings.Contains(cfg.Warnings[0], "foo: not used by drover; ignored") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	for _, src := range []string{"tracker: {knd: github}", "hooks: {timout: 5s}", "limits: {foo: 1}"} {
		if _, err := Parse([]byte("---\n"+src+"\n---\n"), "/x"); err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%s: %v", src, err)
		}
	}
}
