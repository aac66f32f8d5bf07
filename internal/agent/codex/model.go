package codex

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/codex/appserver"
	"github.com/drover-dev/drover/internal/suggest"
)

// The reasoning efforts and service tiers drover lets through: what the
// models of codex-cli 0.171.0's bundled catalog advertise (low … ultra,
// the "priority" tier) and what Codex's configuration reference names
// (none, minimal; the flex and fast tiers). The CLI itself takes any
// string and the model refuses it, or silently drops a tier, mid-run.
var (
	ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"}
	ServiceTiers     = []string{"fast", "flex", "priority"}
)

// modelKey is one of the profile's model settings: its key, the codex
// config key that sets it on the command line (-c KEY=VALUE), and where
// it sits on the profile.
type modelKey struct {
	key, config string
	field       func(p *agent.Profile) *string
}

var modelKeys = []modelKey{
	{"model", "model", func(p *agent.Profile) *string { return &p.Model }},
	{"reasoning_effort", "model_reasoning_effort", func(p *agent.Profile) *string { return &p.ReasoningEffort }},
	{"service_tier", "service_tier", func(p *agent.Profile) *string { return &p.ServiceTier }},
}

// CheckModel checks a profile's model, reasoning_effort and service_tier
// (Symphony's codex.model, codex.reasoning_effort, codex.service_tier) on a
// profile of any kind: another kind refuses them; a codex profile checks
// the values, refuses a key its args set to something else (-m, --model,
// -c model=…), and, in exec mode, adds the flags that set them to its args
// (app-server mode sends them with thread/start and turn/start instead).
func CheckModel(p *agent.Profile, given func(key string) bool) (probs []agent.KeyProblem) {
	bad := func(key, format string, a ...any) {
		probs = append(probs, agent.KeyProblem{Key: key, Msg: fmt.Sprintf(format, a...)})
	}
	if p.Kind != Kind {
		for _, k := range modelKeys {
			if given(k.key) {
				bad(k.key, "only a %s profile reads it; pass the model in this kind's own args, or set kind: %[1]s", Kind)
			}
		}
		return probs
	}
	set := argSettings(p.Args)
	for _, k := range modelKeys {
		v := k.field(p)
		*v = strings.TrimSpace(*v)
		switch inArgs, ok := set[k.config]; {
		case *v == "" && given(k.key):
			bad(k.key, "is empty; name a value or remove the key")
		case *v == "":
		case ok && inArgs != *v:
			bad(k.key, "is %q but the command line's args set %s to %q; keep one of the two", *v, k.config, inArgs)
		case !ok && !appserver.Mode(p.Args) && k.key == "model":
			p.Args = insertArgs(p.Args, "-m", *v)
		case !ok && !appserver.Mode(p.Args):
			p.Args = insertArgs(p.Args, "-c", k.config+"="+strconv.Quote(*v))
		}
	}
	if e := p.ReasoningEffort; e != "" && !slices.Contains(ReasoningEfforts, e) {
		bad("reasoning_effort", "%q is not a reasoning effort%s; use one of %s", e, suggest.DidYouMean(suggest.Closest(e, ReasoningEfforts)), strings.Join(ReasoningEfforts, ", "))
	}
	if s := p.ServiceTier; s != "" && !slices.Contains(ServiceTiers, s) {
		bad("service_tier", "%q is not a service tier%s; use one of %s", s, suggest.DidYouMean(suggest.Closest(s, ServiceTiers)), strings.Join(ServiceTiers, ", "))
	}
	if m := p.Model; strings.ContainsFunc(m, func(r rune) bool { return r <= ' ' }) {
		bad("model", "%q holds a space or a control character; give the model's name as codex knows it (e.g. gpt-5)", m)
	}
	return probs
}

// argSettings reads what a codex command line sets of the model keys:
// -m/--model NAME and -c/--config KEY=VALUE (the value as TOML would read
// a plain string, quoted or not).
func argSettings(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, val, inline := strings.Cut(args[i], "=")
		if !inline {
			if i+1 >= len(args) {
				break
			}
			val = args[i+1]
		}
		switch name {
		case "-m", "--model":
			out["model"] = val
		case "-c", "--config":
			if k, v, ok := strings.Cut(strings.Trim(val, "'"), "="); ok {
				out[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
			}
		default:
			continue
		}
		if !inline {
			i++
		}
	}
	return out
}

func unquote(v string) string {
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return strings.Trim(v, "'")
}

// insertArgs adds flags to a codex exec argument list, before its final
// "-" (the prompt read from stdin) when it has one.
func insertArgs(args []string, flags ...string) []string {
	if n := len(args); n > 0 && args[n-1] == "-" {
		return slices.Concat(args[:n-1], flags, []string{"-"})
	}
	return slices.Concat(args, flags)
}
