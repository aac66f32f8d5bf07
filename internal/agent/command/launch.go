package command

import (
	"regexp"
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
)

// Redacted replaces a secret in a recorded command line.
const Redacted = "[redacted]"

// secretName matches names of flags and variables whose values are secrets.
var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw(or)?d|credential|auth)`)

// secretValue matches the shapes of well-known credentials wherever they
// appear in an argument.
var secretValue = regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{12,}|(ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{12,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9._-]+)|(?i:bearer\s+)\S+`)

// Describe is what spec runs, for the run's record: argv[0] (the profile's
// command) and the arguments with secrets redacted, and the sorted names of
// the environment variables. The prompt, in prompt: arg mode, is shown as
// {{prompt}}. Redacted are: the value after or in a flag whose name looks
// secret (--api-key X, --token=X), NAME=value arguments with such a name,
// credential-shaped strings (sk-…, ghp_…, AKIA…, bearer …), and any
// argument holding the value of a passed variable whose name looks secret.
func Describe(p agent.Profile, inv agent.Invocation, spec proc.Spec) agent.Launch {
	var secrets []string
	var names []string
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		names = append(names, k)
		if secretName.MatchString(k) && len(v) >= 6 {
			secrets = append(secrets, v)
		}
	}
	sort.Strings(names)
	argv := []string{spec.Path}
	redactNext := false
	for _, a := range spec.Args {
		if inv.Prompt != "" && p.Prompt == PromptArg {
			a = strings.ReplaceAll(a, inv.Prompt, PlaceholderPrompt)
		}
		switch {
		case redactNext && !strings.HasPrefix(a, "-"):
			a = Redacted
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			if k, _, _ := strings.Cut(a, "="); secretName.MatchString(k) {
				a = k + "=" + Redacted
			}
		case !strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			if k, _, _ := strings.Cut(a, "="); secretName.MatchString(k) && agent.IsEnvName(k) {
				a = k + "=" + Redacted
			}
		}
		redactNext = strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && secretName.MatchString(a)
		for _, s := range secrets {
			a = strings.ReplaceAll(a, s, Redacted)
		}
		argv = append(argv, secretValue.ReplaceAllString(a, Redacted))
	}
	return agent.Launch{Argv: argv, EnvNames: names}
}

// wire adds an MCP wiring to a process: its arguments around the profile's
// and its variables over the run's (a variable it sets replaces the run's).
func wire(s proc.Spec, w agent.MCPWiring) proc.Spec {
	s.Args = append(append(append([]string{}, w.Before...), s.Args...), w.After...)
	if len(w.Env) == 0 {
		return s
	}
	env := make([]string, 0, len(s.Env)+len(w.Env))
	for _, kv := range s.Env {
		if k, _, _ := strings.Cut(kv, "="); w.Env[k] == "" {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(w.Env))
	for k := range w.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+w.Env[k])
	}
	s.Env = env
	return s
}
