package dispatch

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/config"
)

// MCPServerName is drover's MCP server's name in an agent's config: its
// tools are mcp__drover__drover_block and so on in Claude Code.
const MCPServerName = "drover"

// mcpServer is drover's MCP server for one run, or nil: when
// Options.MCPCommand is unset, the profile says mcp: off, or its kind
// cannot wire one (a command agent runs drover mcp itself). The server
// finds its run from the variables named in EnvVars, which the agent
// passes on; its config files go beside the run's log, in a directory of
// the run's own.
func (r *runner) mcpServer(p agent.Profile, env map[string]string, logPath string) *agent.MCPServer {
	if r.mcpCommand == "" || p.MCP == agent.MCPOff {
		return nil
	}
	if reg, ok := registry.Lookup(p.Kind); !ok || reg.MCP == nil {
		return nil
	}
	var names []string
	for k := range env {
		if strings.HasPrefix(k, "DROVER_") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return &agent.MCPServer{Name: MCPServerName, Command: r.mcpCommand, Args: []string{"mcp"}, EnvVars: names,
		Dir: strings.TrimSuffix(logPath, ".log") + ".mcp", Tools: agent.MCPTools}
}

// calls are the agent's own calls for a's run, for kinds that run inside
// drover: the same fenced service drover mcp serves.
func (r *runner) calls(a attempt, cfg *config.Config) agent.Calls {
	return &agentcall.Service{Store: r.st, RunID: a.run.ID, Now: r.now, Limits: AgentLimits(cfg)}
}

// AgentLimits are the caps cfg puts on what a run's agent writes
// (limits.agent_*), for every agentcall.Service drover makes.
func AgentLimits(cfg *config.Config) *agentcall.Limits {
	l := cfg.Limits
	return &agentcall.Limits{CommentsPerRun: l.AgentCommentsPerRun, CommentsPerCard: l.AgentCommentsPerCard,
		ProgressPerRun: l.AgentProgressPerRun, ProgressPerCard: l.AgentProgressPerCard}
}

// agentEnv is the agent's DROVER_* environment.
func (r *runner) agentEnv(a attempt, ws string) map[string]string {
	env := map[string]string{}
	for k, v := range r.env {
		env[k] = v
	}
	env["DROVER_CARD_ID"] = a.card.ID
	env["DROVER_CARD_IDENTIFIER"] = a.card.Identifier
	env["DROVER_CARD_STATE"] = a.card.State
	env["DROVER_RUN_ID"] = a.run.ID
	env["DROVER_ATTEMPT"] = strconv.Itoa(a.run.Attempt)
	env["DROVER_WORKSPACE"] = ws
	env["DROVER_NODE"] = r.node
	if r.mcpCommand != "" {
		env["DROVER_BIN"] = r.mcpCommand // a command agent runs "$DROVER_BIN" mcp or "$DROVER_BIN" run …
	}
	return env
}

// openChannel opens a's capability (when the runner has a channel) into
// p's environment; p.revoke ends it.
func (r *runner) openChannel(a attempt, cfg *config.Config, p *prepared) error {
	if r.channel == nil {
		return nil
	}
	cr, err := r.channel.Open(a.run.ID, AgentLimits(cfg))
	if err != nil {
		return err
	}
	for k, v := range cr.Env() {
		p.env[k] = v
	}
	// A sandboxed agent reaches its socket at the same path: its directory
	// (the run's own, 0700) is bound in read-write, whatever the network.
	p.binds = append(p.binds, sandbox.Bind{Path: filepath.Dir(cr.Socket()), RW: true})
	var once sync.Once
	p.revoke = func() { once.Do(cr.Close) }
	return nil
}
