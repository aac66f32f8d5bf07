package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent/registry"
)

// TestCodexModelKeys: Symphony's codex.model, codex.reasoning_effort and
// codex.service_tier (and a codex profile's model keys) reach codex: as -m
// and -c flags of the command line in exec mode, as the profile's settings
// for thread/start and turn/start in app-server mode. A key the command
// line sets to something else, a value codex takes none of, and a model key
// on another kind are refused naming the key and the fix.
func TestCodexModelKeys(t *testing.T) {
	cases := []struct {
		name, yaml string
		profile    string // the profile to look at
		argv       string // its command line as it runs ("" = not checked)
		model      string // its Model
		effort     string // its ReasoningEffort
		path, fix  string // the problem, when it is refused
	}{
		{name: "exec mode", yaml: "---\ncodex:\n  command: codex exec --json\n  model: gpt-5\n  reasoning_effort: high\n  service_tier: flex\n",
			profile: "codex", model: "gpt-5", effort: "high", argv: `exec --json -m gpt-5 -c model_reasoning_effort="high" -c service_tier="flex"`},
		{name: "plain codex command", yaml: "---\ncodex:\n  command: codex\n  model: gpt-5\n",
			profile: "codex", model: "gpt-5", argv: "exec --json --skip-git-repo-check -m gpt-5 -"},
		{name: "app-server mode", yaml: "---\ncodex:\n  command: codex app-server\n  model: gpt-5\n  reasoning_effort: xhigh\n  service_tier: priority\n",
			profile: "codex", model: "gpt-5", effort: "xhigh", argv: "app-server"},
		{name: "the command line says the same", yaml: "---\ncodex:\n  command: codex exec --json -m gpt-5\n  model: gpt-5\n",
			profile: "codex", model: "gpt-5", argv: "exec --json -m gpt-5"},
		{name: "drover's own codex profile", yaml: "---\nagents:\n  profiles:\n    cx:\n      kind: codex\n      model: o3\n      reasoning_effort: low\n",
			profile: "cx", model: "o3", effort: "low", argv: `exec --json --skip-git-repo-check -m o3 -c model_reasoning_effort="low" -`},
		{name: "model differs from -m", yaml: "---\ncodex:\n  command: codex exec --json -m o3\n  model: gpt-5\n",
			path: "codex.model", fix: `is "gpt-5" but the command line's args set model to "o3"; keep one of the two`},
		{name: "effort differs from -c", yaml: "---\ncodex:\n  command: codex -c model_reasoning_effort=low app-server\n  reasoning_effort: high\n",
			path: "codex.reasoning_effort", fix: `is "high" but the command line's args set model_reasoning_effort to "low"`},
		{name: "effort typo", yaml: "---\ncodex:\n  command: codex app-server\n  reasoning_effort: hihg\n",
			path: "codex.reasoning_effort", fix: `"hihg" is not a reasoning effort (did you mean "high"?); use one of none, minimal, low, medium, high, xhigh, max, ultra`},
		{name: "unknown tier", yaml: "---\ncodex:\n  command: codex exec --json\n  service_tier: turbo\n",
			path: "codex.service_tier", fix: `"turbo" is not a service tier; use one of fast, flex, priority`},
		{name: "model with a space", yaml: "---\nagents:\n  profiles:\n    cx:\n      kind: codex\n      model: gpt 5\n",
			path: "agents.profiles.cx.model", fix: "holds a space or a control character"},
		{name: "unclosed quote in codex.command", yaml: "---\ncodex:\n  command: codex --config 'model=o3 app-server\n",
			path: "codex.command", fix: "cannot be split into words as a shell would"},
		{name: "model on another kind", yaml: "---\nagents:\n  profiles:\n    c:\n      kind: claude\n      model: opus\n",
			path: "agents.profiles.c.model", fix: "only a codex profile reads it; pass the model in this kind's own args"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.yaml+"---\n")
			if tc.path != "" {
				var e *Error
				if !errors.As(err, &e) || !slices.ContainsFunc(e.Problems, func(p Problem) bool { return p.Path == tc.path && strings.Contains(p.Msg, tc.fix) }) {
					t.Fatalf("err = %v; want %s: …%s", err, tc.path, tc.fix)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := cfg.Agents.Profiles[tc.profile]
			if got := strings.Join(registry.WithDefaults(p).Args, " "); got != tc.argv || p.Model != tc.model || p.ReasoningEffort != tc.effort {
				t.Errorf("argv %q model %q effort %q; want %q model %q effort %q", got, p.Model, p.ReasoningEffort, tc.argv, tc.model, tc.effort)
			}
			if len(cfg.Ignored) > 0 {
				t.Errorf("ignored %v: the model keys are used", cfg.Ignored)
			}
		})
	}
}

// TestCodexModelSurvivesResume: the run after a human's answer (codex exec
// resume) keeps the model and effort Symphony's keys set.
func TestCodexModelSurvivesResume(t *testing.T) {
	cfg := mustParse(t, "---\ncodex:\n  command: codex\n  model: gpt-5\n  reasoning_effort: high\n---\n")
	p, ok := registry.Resume(cfg.Agents.Profiles["codex"], "sess-1")
	if got := strings.Join(p.Args, " "); !ok || got != `exec resume --json --skip-git-repo-check -m gpt-5 -c model_reasoning_effort="high" sess-1 -` {
		t.Errorf("resume argv %q (ok %v)", got, ok)
	}
}

// TestCodexModelOfSymphonysCommandLine: Symphony's own WORKFLOW.md sets the
// model on codex.command (--config 'model="gpt-5.5"'); codex.model saying
// the same is fine, saying another is refused naming both.
func TestCodexModelOfSymphonysCommandLine(t *testing.T) {
	line := `codex --config 'model="gpt-5.5"' --config model_reasoning_effort=xhigh app-server`
	cfg := mustParse(t, "---\ncodex:\n  command: "+line+"\n  model: gpt-5.5\n  reasoning_effort: xhigh\n---\n")
	if p := cfg.Agents.Profiles["codex"]; p.Model != "gpt-5.5" || p.ReasoningEffort != "xhigh" {
		t.Errorf("profile %+v", p)
	}
	_, err := parse(t, "---\ncodex:\n  command: "+line+"\n  model: gpt-5\n---\n")
	if err == nil || !strings.Contains(err.Error(), `codex.model: is "gpt-5" but the command line's args set model to "gpt-5.5"`) {
		t.Errorf("err = %v", err)
	}
}
