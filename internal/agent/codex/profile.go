package codex

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/shlex"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/codex/appserver"
	"github.com/drover-dev/drover/internal/suggest"
)

// The values codex app-server 0.171.0 takes (its AskForApproval,
// SandboxMode and SandboxPolicy types); refused at load so a typo is not
// discovered when a run's thread/start is refused.
var (
	appServerKeys    = []string{"approval_policy", "thread_sandbox", "turn_sandbox_policy"}
	approvalPolicies = []string{"untrusted", "on-request", "never"}
	threadSandboxes  = []string{"read-only", "workspace-write", "danger-full-access"}
	turnSandboxTypes = []string{"dangerFullAccess", "readOnly", "externalSandbox", "workspaceWrite"}
)

// CheckAppServer checks the keys only a codex profile in app-server mode
// reads (approval_policy, thread_sandbox, turn_sandbox_policy; given says
// which the file sets) on a profile of any kind: another kind refuses them,
// exec mode leaves them unused, app-server mode checks their values against
// what codex app-server takes and makes them JSON values.
func CheckAppServer(p *agent.Profile, given func(key string) bool) (probs []agent.KeyProblem) {
	bad := func(key, format string, a ...any) {
		probs = append(probs, agent.KeyProblem{Key: key, Msg: fmt.Sprintf(format, a...)})
	}
	for _, k := range appServerKeys {
		if !given(k) {
		} else if p.Kind != Kind {
			bad(k, "only a %s profile in app-server mode reads it; remove it or set kind: %[1]s with args: [app-server]", Kind)
		} else if !appserver.Mode(p.Args) {
			probs = append(probs, agent.KeyProblem{Key: k, Unused: true, Msg: "not used: codex runs in exec mode here; only app-server mode (args: [app-server], or codex app-server in codex.command) reads it"})
		}
	}
	if p.Kind != Kind {
		return probs
	}
	if p.ApprovalPolicy != nil {
		s, _ := p.ApprovalPolicy.(string)
		m, _ := p.ApprovalPolicy.(map[string]any)
		if _, granular := m["granular"]; !slices.Contains(approvalPolicies, s) && !(granular && len(m) == 1) {
			bad("approval_policy", "%s is not an approval policy; use one of %s, or {granular: {…}}", show(p.ApprovalPolicy), strings.Join(approvalPolicies, ", "))
		}
		p.ApprovalPolicy = jsonValue(p.ApprovalPolicy)
	}
	if s := p.ThreadSandbox; s != "" && !slices.Contains(threadSandboxes, s) {
		bad("thread_sandbox", "%q is not a sandbox mode%s; use one of %s", s, suggest.DidYouMean(suggest.Closest(s, threadSandboxes)), strings.Join(threadSandboxes, ", "))
	}
	if p.TurnSandboxPolicy != nil {
		m, _ := p.TurnSandboxPolicy.(map[string]any)
		if typ, _ := m["type"].(string); !slices.Contains(turnSandboxTypes, typ) {
			bad("turn_sandbox_policy", "%s is not a sandbox policy; give a mapping whose type is one of %s (e.g. {type: workspaceWrite, networkAccess: false})", show(p.TurnSandboxPolicy), strings.Join(turnSandboxTypes, ", "))
		}
		p.TurnSandboxPolicy = jsonValue(p.TurnSandboxPolicy)
	}
	return probs
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// jsonValue is a YAML-decoded value as encoding/json would give it back.
func jsonValue(v any) any {
	var out any
	if b, err := json.Marshal(v); err != nil || json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// SetCommandLine makes Symphony's codex.command line the profile's command
// and arguments: "codex … app-server" speaks the app-server protocol with
// the line's own arguments; "codex exec …" is the whole line (DefaultArgs
// would add exec again) and must keep what the parser reads (CheckArgs);
// anything else adds flags after drover's own. The line is split into
// words as a shell would (Symphony runs it with bash -lc): quotes group
// and are removed, so --config 'model="gpt-5.5"' reaches codex as
// model="gpt-5.5". Nothing is expanded.
func SetCommandLine(p *agent.Profile, line string) error {
	fields, err := shlex.Split(line)
	if err != nil {
		return fmt.Errorf("cannot be split into words as a shell would (%v); close its quotes", err)
	}
	if len(fields) == 0 {
		return fmt.Errorf("names no program; give the codex command line (e.g. codex app-server)")
	}
	p.Command, p.Args = fields[0], slices.Clip(fields[1:])
	if len(p.Args) == 0 {
		p.Args = nil
	}
	if appserver.Mode(p.Args) || slices.Contains(p.Args, "exec") {
		p.ArgsMode = agent.ArgsReplace
		return CheckArgs(p.Args)
	}
	return nil
}
