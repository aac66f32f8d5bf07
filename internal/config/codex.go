package config

import (
	"fmt"
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
	// The app-server settings: applied when codex.command runs
	// `codex app-server` (drover then speaks its protocol); with `codex
	// exec` they are not used and are listed in Config.Ignored.
	ApprovalPolicy    any    `json:"approval_policy,omitempty"`
	ThreadSandbox     string `json:"thread_sandbox,omitempty"`
	TurnSandboxPolicy any    `json:"turn_sandbox_policy,omitempty"`
}

// The values codex app-server 0.171.0 takes (its AskForApproval,
// SandboxMode and SandboxPolicy types); refused at load so a typo is not
// discovered when a run's thread/start is refused.
var (
	approvalPolicies = []string{"untrusted", "on-request", "never"}
	threadSandboxes  = []string{"read-only", "workspace-write", "danger-full-access"}
	turnSandboxTypes = []string{"dangerFullAccess", "readOnly", "externalSandbox", "workspaceWrite"}
)

// appServerKeys are the keys only app-server mode reads.
var appServerKeys = []string{"approval_policy", "thread_sandbox", "turn_sandbox_policy"}

func decodeCodex(d *decoder, n *yaml.Node) Codex {
	var c Codex
	f := d.fields(n, "codex", []string{"command", "approval_policy", "thread_sandbox", "turn_sandbox_policy", "turn_timeout_ms", "read_timeout_ms", "stall_timeout_ms"}, lenient)
	c.Command = d.str(f["command"], "codex.command", expandNone)
	appServer := contains(strings.Fields(c.Command), "app-server")
	ignored := []string{"read_timeout_ms"}
	if !appServer {
		ignored = append(appServerKeys, ignored...)
	}
	for _, k := range ignored {
		if _, ok := f[k]; ok {
			d.ignored = append(d.ignored, "codex."+k)
			if appServer {
				d.warnf("codex."+k, "not used: drover waits on the app-server's messages with codex.stall_timeout_ms and codex.turn_timeout_ms")
			} else {
				d.warnf("codex."+k, "not used: drover runs codex with `exec --json`; run `codex app-server` in codex.command for the app-server keys, or put flags in an agents.profiles entry's args")
			}
		}
	}
	c.ApprovalPolicy, c.ThreadSandbox, c.TurnSandboxPolicy = decodeAppServerKeys(d, f, "codex")
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

// decodeAppServerKeys reads approval_policy, thread_sandbox and
// turn_sandbox_policy under path (codex, or a codex profile), refusing
// values codex app-server does not take.
func decodeAppServerKeys(d *decoder, f map[string]*yaml.Node, path string) (approval any, sandbox string, turn any) {
	if v, ok := f["approval_policy"]; ok && !isNull(deref(v)) {
		approval = decodeApprovalPolicy(d, deref(v), path+".approval_policy")
	}
	if v, ok := f["thread_sandbox"]; ok && !isNull(deref(v)) {
		sandbox = d.str(v, path+".thread_sandbox", expandPlain)
		if !contains(threadSandboxes, sandbox) {
			d.errf(deref(v), path+".thread_sandbox", "%q is not a sandbox mode; use one of %s", sandbox, strings.Join(threadSandboxes, ", "))
		}
	}
	if v, ok := f["turn_sandbox_policy"]; ok && !isNull(deref(v)) {
		turn = decodeTurnSandbox(d, deref(v), path+".turn_sandbox_policy")
	}
	return approval, sandbox, turn
}

func decodeApprovalPolicy(d *decoder, v *yaml.Node, path string) any {
	var x any
	if err := v.Decode(&x); err != nil {
		d.errf(v, path, "%v", err)
		return nil
	}
	switch t := x.(type) {
	case string:
		if contains(approvalPolicies, t) {
			return t
		}
	case map[string]any:
		if _, ok := t["granular"]; ok && len(t) == 1 {
			return jsonCompatible(t)
		}
	}
	d.errf(v, path, "%s is not an approval policy; use one of %s, or {granular: {…}}", describe(x), strings.Join(approvalPolicies, ", "))
	return nil
}

func decodeTurnSandbox(d *decoder, v *yaml.Node, path string) any {
	var x any
	if err := v.Decode(&x); err != nil {
		d.errf(v, path, "%v", err)
		return nil
	}
	m, ok := x.(map[string]any)
	if typ, _ := m["type"].(string); !ok || !contains(turnSandboxTypes, typ) {
		d.errf(v, path, "%s is not a sandbox policy; give a mapping whose type is one of %s (e.g. {type: workspaceWrite, networkAccess: false})", describe(x), strings.Join(turnSandboxTypes, ", "))
		return nil
	}
	return jsonCompatible(m)
}

// describe is a YAML value in an error message.
func describe(x any) string {
	if s, ok := x.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", x)
}

// codexProfile turns Symphony's codex: section into a profile named codex.
func codexProfile(d *decoder, cx Codex) agent.Profile {
	p := agent.Profile{Name: registry.SymphonyCodexKind, Kind: registry.SymphonyCodexKind, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
	fields := strings.Fields(cx.Command)
	if len(fields) > 0 {
		p.Command = fields[0]
	}
	switch {
	case contains(fields, "app-server"):
		// "codex … app-server": drover speaks the app-server protocol
		// with the line's own arguments and the app-server keys.
		p.Args, p.ArgsMode = fields[1:], agent.ArgsReplace
		p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy = cx.ApprovalPolicy, cx.ThreadSandbox, cx.TurnSandboxPolicy
	case len(fields) > 1:
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
