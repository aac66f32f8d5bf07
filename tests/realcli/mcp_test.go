package realcli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// The real Claude Code CLI calls drover's MCP tools (scripted through the
// fake provider as tool_use answers): drover wires drover mcp in with
// --mcp-config and --allowedTools, and the card ends where the agent said.

type mcpCard struct {
	card
	Events []struct {
		Type   string `json:"type"`
		RunID  string `json:"run_id"`
		Reason string `json:"reason"`
	} `json:"events"`
}

func TestClaudeCodeReportsThroughDroversTools(t *testing.T) {
	for _, c := range installed(t, "claude") {
		t.Run(c.version, func(t *testing.T) { mcpGroup(t, c) })
	}
}

// Codex gets drover mcp through -c mcp_servers.drover.* overrides; the
// fake provider calls its tools in the namespace mcp__drover.
func TestCodexReportsThroughDroversTools(t *testing.T) {
	for _, c := range installed(t, "codex") {
		t.Run(c.version, func(t *testing.T) { mcpGroup(t, c) })
	}
}

// Gemini CLI gets drover mcp from a system settings file
// (GEMINI_CLI_SYSTEM_SETTINGS_PATH) and names its tools mcp_drover_<tool>.
func TestGeminiReportsThroughDroversTools(t *testing.T) {
	for _, c := range installed(t, "gemini") {
		t.Run(c.version, func(t *testing.T) { mcpGroup(t, c) })
	}
}

// opencode gets drover mcp from OPENCODE_CONFIG_CONTENT (the profile's own
// OPENCODE_CONFIG, which names the fake provider, stays in force) and
// names its tools drover_<tool>.
func TestOpencodeReportsThroughDroversTools(t *testing.T) {
	for _, c := range installed(t, "opencode") {
		t.Run(c.version, func(t *testing.T) { mcpGroup(t, c) })
	}
}

// mcpCall is the provider's call of drover's MCP tool, under the name the
// CLI gives the tools of the MCP server "drover" (read from the tools list
// each CLI sends in its requests): Claude Code mcp__drover__<tool>, Codex
// the Responses namespace mcp__drover, Gemini CLI mcp_drover_<tool>,
// opencode drover_<tool>.
func mcpCall(c cli, tool, input string) fp.Step {
	switch c.kind {
	case "gemini":
		return fp.ToolUse("mcp_drover_"+tool, input)
	case "opencode":
		return fp.ToolUse("drover_"+tool, input)
	}
	return fp.MCPToolUse("drover", tool, input)
}

func mcpGroup(t *testing.T, c cli) {
	p := fp.New(t)
	h := &harness{t: t, dir: t.TempDir()}
	scen := map[string][]fp.Step{
		"block": {mcpCall(c, "drover_progress", `{"note":"reading the card"}`),
			mcpCall(c, "drover_block", `{"what":"the endpoint /v2/pay does not exist","where":"spec.endpoint","how":"name an endpoint of api.yaml"}`),
			fp.Success("I blocked the card.")},
		"ask": {mcpCall(c, "drover_ask_human", `{"question":"Deploy to staging or production?","options":["staging","production"]}`),
			fp.Success("I asked."), fp.Success("Deployed to the answer's environment.")},
		"live": {mcpCall(c, "drover_comment", `{"text":"found the flaky test"}`), fp.Hang()},
	}
	var prof strings.Builder
	prof.WriteString("default: m-block\nprofiles:\n")
	for _, name := range []string{"block", "ask", "live"} {
		s := scenario{name: "mcp_" + name}
		p.Script(marker(s), scen[name]...)
		fmt.Fprintf(&prof, "  m-%s:\n    kind: %s\n    command: %s\n    timeout: 300s\n    stall_timeout: 240s\n    env:\n", name, c.kind, c.bin)
		writeEnvYAML(&prof, h.profileEnv(c, s, p.URL()))
	}
	testkit.NewWorkflow().
		Set("agents", prof.String()).
		Set("policy", "max_attempts: 3\nbackoff: {base: 10m, max: 10m, jitter: 0}").
		Set("dispatch", "max_concurrent: 3\npoll_interval: 500ms").
		Write(t, h.dir)
	ids := map[string]string{}
	for _, name := range []string{"block", "ask", "live"} {
		var cd card
		h.jsonOf(&cd, "card", "add", "--title", marker(scenario{name: "mcp_" + name})+": do the task", "--state", "ready", "--agent", "m-"+name)
		ids[name] = cd.Identifier
	}
	h.serve()
	deadline := time.Now().Add(6 * time.Minute)
	show := func(id string) mcpCard {
		var cd mcpCard
		h.jsonOf(&cd, "card", "show", id)
		return cd
	}
	wait := func(id, what string, cond func(mcpCard) bool) mcpCard {
		t.Helper()
		for {
			cd := show(id)
			if cond(cd) {
				return cd
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s did not happen: state %s (%s), runs %+v\nlog:\n%s", id, what, cd.State, cd.StateReason, cd.Runs, h.runLog(cd.card))
			}
			time.Sleep(time.Second)
		}
	}

	t.Run("block", func(t *testing.T) {
		cd := wait(ids["block"], "blocked", func(cd mcpCard) bool { return cd.State == "blocked" })
		br := cd.BlockReason
		if br == nil || br.What != "the endpoint /v2/pay does not exist" || br.Where != "spec.endpoint" || br.How != "name an endpoint of api.yaml" {
			t.Fatalf("block reason %+v, want the agent's own what/where/how\nlog:\n%s", br, h.runLog(cd.card))
		}
		r := cd.Runs[0]
		if r.Kind != "agent_blocked" || r.Counted || len(cd.Runs) != 1 {
			t.Fatalf("runs %+v, want one uncounted agent_blocked run", cd.Runs)
		}
		var progress bool
		for _, ev := range cd.Events {
			progress = progress || (ev.Type == "agent_progress" && ev.Reason == "reading the card" && ev.RunID == r.ID)
		}
		if !progress {
			t.Errorf("no agent_progress event of the run: %+v", cd.Events)
		}
	})
	t.Run("ask", func(t *testing.T) {
		id := ids["ask"]
		wait(id, "parked", func(cd mcpCard) bool { return cd.State == "awaiting_input" })
		if _, err := h.drover("card", "answer", id, "staging, never production"); err != nil {
			t.Fatal(err)
		}
		cd := wait(id, "review after the answer", func(cd mcpCard) bool { return cd.State == "review" })
		first, second := cd.Runs[0], cd.Runs[len(cd.Runs)-1]
		if first.FinishedAt != nil && second.FinishedAt != nil && second.FinishedAt.Before(*first.FinishedAt) {
			first, second = second, first
		}
		if len(cd.Runs) != 2 || first.Kind != "input_required" || second.Kind != "succeeded" {
			t.Fatalf("runs %+v, want input_required then succeeded", cd.Runs)
		}
		got := false
		for _, r := range p.Marked(marker(scenario{name: "mcp_ask"})) {
			got = got || strings.Contains(r.Body, "staging, never production")
		}
		if !got {
			t.Fatalf("no request of the second attempt carried the answer%s", requestLog(p, marker(scenario{name: "mcp_ask"})))
		}
	})
	t.Run("comment while live", func(t *testing.T) {
		id := ids["live"]
		wait(id, "the agent's comment while the run is live", func(cd mcpCard) bool {
			for _, ev := range cd.Events {
				if ev.Type == "commented" && ev.Reason == "found the flaky test" && cd.State == "in_progress" {
					return true
				}
			}
			return false
		})
		if _, err := h.drover("card", "cancel", id); err != nil {
			t.Fatal(err)
		}
	})
}
