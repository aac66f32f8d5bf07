package config

import (
	"strings"
	"testing"
	"time"
)

func TestVerifyAndTruthKeys(t *testing.T) {
	cfg := mustParse(t, `---
policy:
  correlation: {cards: 4, window: 5m}
  repeat_cap: -1
verify:
  commands: ["go test ./...", "true"]
  timeout: 2m
agents:
  default: a
  profiles:
    a:
      kind: sim
      verify: {commands: ["make check"]}
    b:
      kind: sim
---
hi
`)
	if cfg.Policy.CorrelationCards != 4 || cfg.Policy.CorrelationWindow != 5*time.Minute || cfg.Policy.RepeatCap != -1 {
		t.Errorf("policy = %+v", cfg.Policy)
	}
	if v := cfg.VerifyFor("b"); strings.Join(v.Commands, "|") != "go test ./...|true" || v.Timeout != 2*time.Minute {
		t.Errorf("verify for b = %+v", v)
	}
	if v := cfg.VerifyFor(""); strings.Join(v.Commands, "|") != "make check" || v.Timeout != DefaultVerifyTimeout {
		t.Errorf("verify for the default profile a = %+v", v)
	}
	def := mustParse(t, "---\n---\nhi\n")
	if def.Policy.CorrelationCards != 3 || def.Policy.CorrelationWindow != 10*time.Minute || def.Policy.RepeatCap != 3 || len(def.VerifyFor("").Commands) != 0 {
		t.Errorf("defaults: policy %+v verify %+v", def.Policy, def.VerifyFor(""))
	}
}

func TestVerifyAndTruthKeyErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"policy: {repeat_cap: 1}", "policy.repeat_cap"},
		{"policy: {repeat_cap: 0}", "-1 to turn it off"},
		{"policy: {correlation: {cards: 1}}", "policy.correlation.cards"},
		{"policy: {correlation: {window: 0s}}", "policy.correlation.window"},
		{"policy: {correlation: {card: 3}}", "did you mean"},
		{"verify: {command: [x]}", "verify.command"},
		{"verify: {commands: [\"\"]}", "verify.commands"},
		{"verify: {timeout: soon}", "verify.timeout"},
		{"agents: {profiles: {a: {kind: sim, verify: {timeout: 0s}}}}", "agents.profiles.a.verify.timeout"},
	} {
		_, err := parse(t, "---\n"+c.src+"\n---\nhi\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.src, err, c.want)
		}
	}
}

// The caps on what agents write: their defaults, and a file's own values
// (negative is no cap).
func TestAgentWriteLimits(t *testing.T) {
	def := mustParse(t, "---\n---\nhi\n").Limits
	if def.AgentCommentsPerRun != DefaultAgentCommentsPerRun || def.AgentCommentsPerCard != DefaultAgentCommentsPerCard ||
		def.AgentProgressPerRun != DefaultAgentProgressPerRun || def.AgentProgressPerCard != DefaultAgentProgressPerCard {
		t.Errorf("defaults: %+v", def)
	}
	l := mustParse(t, "---\nlimits: {agent_comments_per_run: 5, agent_comments_per_card: 0, agent_progress_per_run: -1, agent_progress_per_card: 7}\n---\nhi\n").Limits
	if l.AgentCommentsPerRun != 5 || l.AgentCommentsPerCard != 0 || l.AgentProgressPerRun != -1 || l.AgentProgressPerCard != 7 {
		t.Errorf("limits = %+v", l)
	}
}
