package config

import (
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/registry"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/agent"
)

// codex: is Symphony's agent section; drover reads it as a profile.

// Codex holds Symphony's codex: keys. When agents.profiles is absent,
// codex.command becomes a profile named "codex" of kind codex.
type Codex struct {
	Command      string        `json:"command,omitempty"`
	TurnTimeout  time.Duration `json:"turn_timeout,omitempty"`
	ReadTimeout  time.Duration `json:"read_timeout,omitempty"`
	StallTimeout time.Duration `json:"stall_timeout,omitempty"`
	// Carried for reference only: drover's codex adapter runs `codex exec`
	// and does not apply them (they are also listed in Config.Ignored).
	ApprovalPolicy    string `json:"approval_policy,omitempty"`
	ThreadSandbox     string `json:"thread_sandbox,omitempty"`
	TurnSandboxPolicy any    `json:"turn_sandbox_policy,omitempty"`
}

func decodeCodex(d *decoder, n *yaml.Node) Codex {
	var c Codex
	f := d.fields(n, "codex", []string{"command", "approval_policy", "thread_sandbox", "turn_sandbox_policy", "turn_timeout_ms", "read_timeout_ms", "stall_timeout_ms"}, lenient)
	c.Command = d.str(f["command"], "codex.command", expandNone)
	for _, k := range []string{"approval_policy", "thread_sandbox", "turn_sandbox_policy", "read_timeout_ms"} {
		if _, ok := f[k]; ok {
			d.ignored = append(d.ignored, "codex."+k)
			d.warnf("codex."+k, "not used: drover runs codex with `exec --json`; put flags in an agents.profiles entry's args")
		}
	}
	if v, ok := f["approval_policy"]; ok && deref(v).Kind == yaml.ScalarNode {
		c.ApprovalPolicy = deref(v).Value
	}
	if v, ok := f["thread_sandbox"]; ok && deref(v).Kind == yaml.ScalarNode {
		c.ThreadSandbox = deref(v).Value
	}
	if v, ok := f["turn_sandbox_policy"]; ok {
		var x any
		if deref(v).Decode(&x) == nil {
			c.TurnSandboxPolicy = jsonCompatible(x)
		}
	}
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"turn_timeout_ms", &c.TurnTimeout}, {"read_timeout_ms", &c.ReadTimeout}, {"stall_timeout_ms", &c.StallTimeout}} {
		if v, ok := f[k.key]; ok {
			*k.dst, _ = d.millis(v, "codex."+k.key)
		}
	}
	return c
}

// codexProfile turns Symphony's codex: section into a profile named codex.
func codexProfile(d *decoder, cx Codex) agent.Profile {
	p := agent.Profile{Name: registry.SymphonyCodexKind, Kind: registry.SymphonyCodexKind, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
	fields := strings.Fields(cx.Command)
	if len(fields) > 0 {
		p.Command = fields[0]
	}
	if contains(fields, "app-server") {
		d.warnf("codex.command", "drover runs codex as `%s exec --json`; the app-server arguments are not used", p.Command)
	} else if len(fields) > 1 {
		// "codex exec …" is the whole line (the registry would add exec
		// again); anything else adds flags after drover's own.
		p.Args = fields[1:]
		if contains(p.Args, "exec") {
			p.ArgsMode = agent.ArgsReplace
			if err := registry.CheckArgs(p.Kind, p.Args); err != nil {
				d.errf(nil, "codex.command", "%q %v", cx.Command, err)
			}
		}
	}
	if cx.TurnTimeout > 0 {
		p.Timeout = cx.TurnTimeout
	}
	if cx.StallTimeout > 0 {
		p.StallTimeout = cx.StallTimeout
	}
	return p
}
