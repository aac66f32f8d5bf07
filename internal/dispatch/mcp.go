package dispatch

import (
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agentcall"
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
func (d *Dispatcher) mcpServer(p agent.Profile, env map[string]string, logPath string) *agent.MCPServer {
	if d.o.MCPCommand == "" || p.MCP == agent.MCPOff {
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
	return &agent.MCPServer{Name: MCPServerName, Command: d.o.MCPCommand, Args: []string{"mcp"}, EnvVars: names,
		Dir: strings.TrimSuffix(logPath, ".log") + ".mcp", Tools: agent.MCPTools}
}

// calls are the agent's own calls for j's run, for kinds that run inside
// drover: the same fenced service drover mcp serves.
func (d *Dispatcher) calls(j *job) agent.Calls {
	return &agentcall.Service{Store: d.o.Store, RunID: j.run.ID, Now: d.o.Now}
}
