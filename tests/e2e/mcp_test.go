package e2e_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// A command agent that speaks MCP over stdio to drover mcp: a bash script
// runs "$DROVER_BIN" mcp as a coprocess, sends initialize, tools/list and
// tools/call lines, and appends every response to the side file.

// mcpScript is agent.sh for a command profile: its body may call
// mcp_call NAME ARGS_JSON (the response line goes to $SIDE and $REPLY).
func (e *env) writeMCPScript(body string) {
	e.t.Helper()
	s := fmt.Sprintf(`#!/usr/bin/env bash
SIDE=%q
PROMPT=$(cat)
echo "prompt attempt $DROVER_ATTEMPT: $PROMPT" >> "$SIDE"
coproc MCP { "$DROVER_BIN" mcp 2>>"$SIDE.mcp-stderr"; }
n=0
rpc() { n=$((n+1)); printf '{"jsonrpc":"2.0","id":%%d,"method":"%%s","params":%%s}\n' "$n" "$1" "$2" >&"${MCP[1]}"; IFS= read -r REPLY <&"${MCP[0]}"; echo "reply $1: $REPLY" >> "$SIDE"; }
rpc initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent.sh","version":"1"}}'
printf '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' >&"${MCP[1]}"
rpc tools/list '{}'
mcp_call() { rpc tools/call "{\"name\":\"$1\",\"arguments\":$2}"; }
%s
`, e.side, body)
	if err := os.WriteFile(filepath.Join(e.dir, "agent.sh"), []byte(s), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

// mcpEnv is an env whose script profile prompts with the question and
// answer, so the attempt after an answer can show it got it.
func mcpEnv(t *testing.T, backend testkit.Backend, body string) *env {
	e := newEnv(t, wf{}, "", backend)
	w := wf{}.render()
	w = strings.Replace(w, "Work on {{ card.identifier }}: {{ card.title }} (attempt {{ attempt }})",
		"Work on {{ card.identifier }} (attempt {{ attempt }}){% if answer %}; you asked: {{ question }}; the answer: {{ answer }}{% endif %}", 1)
	e.writeFile("WORKFLOW.md", w)
	e.writeMCPScript(body)
	return e
}

func (e *env) side_() string {
	b, _ := os.ReadFile(e.side)
	return string(b)
}

func TestCommandAgentBlocksThroughMCP(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := mcpEnv(t, backend, `mcp_call drover_card '{}'
mcp_call drover_block '{"what":"the endpoint /v2/pay does not exist","where":"spec.endpoint","how":"name an endpoint of api.yaml, then drover card resume"}'
exit 1`)
		c := e.addCard("pay")
		e.start()
		eventually(t, 30*time.Second, c.Identifier+" blocked", func() bool { return e.card(c.Identifier).State == "blocked" })
		got := e.card(c.Identifier)
		br := got.BlockReason
		if br == nil || br.Kind != "agent_blocked" || br.What != "the endpoint /v2/pay does not exist" || br.Where != "spec.endpoint" ||
			br.How != "name an endpoint of api.yaml, then drover card resume" {
			t.Fatalf("block reason = %+v, want the agent's own what/where/how", br)
		}
		rs := e.runs(c.Identifier)
		if len(rs) != 1 || rs[0].Outcome != "blocked" || rs[0].Kind != "agent_blocked" || rs[0].Counted {
			t.Fatalf("runs = %+v, want one uncounted agent_blocked run", rs)
		}
		side := e.side_()
		for _, tool := range []string{"drover_card", "drover_ask_human", "drover_block", "drover_comment", "drover_progress", "drover_done"} {
			if !strings.Contains(side, `"name":"`+tool+`"`) {
				t.Errorf("tools/list lacks %s:\n%s", tool, side)
			}
		}
		if !strings.Contains(side, `\"identifier\": \"`+c.Identifier+`\"`) {
			t.Errorf("drover_card did not return the card:\n%s", side)
		}
		var report bool
		for _, ev := range e.events(c.Identifier) {
			if ev.Type == "agent_report" && ev.RunID == rs[0].ID {
				report = true
			}
		}
		if !report {
			t.Errorf("no agent_report event with the run id")
		}
		// The run has ended: the same server, started again for it, refuses
		// every call and changes nothing.
		before := e.card(c.Identifier)
		out := e.mcpOnce(rs[0].ID, "drover_comment", `{"text":"too late"}`)
		if !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "has ended") {
			t.Fatalf("a call after the run ended: %s, want a tool error saying the run has ended", out)
		}
		_, stderr, code := e.cli().Run(nil, "run", "comment", "too late")
		if code == 0 || !strings.Contains(stderr, "DROVER_RUN_ID") {
			t.Fatalf("drover run comment without a run: exit %d, %s", code, stderr)
		}
		cli := e.cli()
		cli.Env = append(cli.Env, "DROVER_RUN_ID="+rs[0].ID)
		_, stderr, code = cli.Run(nil, "run", "block", "--what", "late", "--where", "x", "--how", "y")
		if code != 1 || !strings.Contains(stderr, "has ended") {
			t.Fatalf("drover run block after the end: exit %d, %s", code, stderr)
		}
		after := e.card(c.Identifier)
		if len(after.Events) != len(before.Events) || after.State != before.State {
			t.Fatalf("refused calls changed the card: %d events → %d, %s → %s", len(before.Events), len(after.Events), before.State, after.State)
		}
	})
}

// mcpOnce starts drover mcp for run, makes one tool call and returns the
// call's response line.
func (e *env) mcpOnce(runID, tool, args string) string {
	e.t.Helper()
	cmd := exec.Command(testkit.Binary(e.t), "mcp")
	cmd.Dir = e.dir
	cmd.Env = append(e.cmdEnv(), "DROVER_RUN_ID="+runID, "DROVER_CONFIG="+filepath.Join(e.dir, "WORKFLOW.md"))
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	r := bufio.NewReader(outp)
	send := func(s string) string {
		fmt.Fprintln(in, s)
		if !strings.Contains(s, `"id"`) {
			return ""
		}
		line, err := r.ReadString('\n')
		if err != nil {
			e.t.Fatalf("drover mcp: %v", err)
		}
		return line
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
}

func TestCommandAgentAsksThroughMCPAndGetsTheAnswer(t *testing.T) {
	e := mcpEnv(t, testkit.SQLite, `if [ "$DROVER_ATTEMPT" = 1 ]; then
  mcp_call drover_ask_human '{"question":"Which database should the cache use?","options":["postgres","sqlite"]}'
  mcp_call drover_block '{"what":"second report","where":"x","how":"y"}'
  exit 0
fi
mcp_call drover_done '{"summary":"used postgres as answered"}'
exit 0`)
	c := e.addCard("cache")
	e.start()
	eventually(t, 30*time.Second, c.Identifier+" parked", func() bool { return e.card(c.Identifier).State == "awaiting_input" })
	side := e.side_()
	if !strings.Contains(side, "reported already") {
		t.Errorf("a second report in the same run was not refused:\n%s", side)
	}
	var parked bool
	for _, ev := range e.card(c.Identifier).Events {
		if ev.Type == "parked" && strings.Contains(string(ev.Data), "Which database should the cache use? (options: postgres | sqlite)") {
			parked = true
		}
	}
	if !parked {
		t.Fatalf("no parked event with the agent's question")
	}
	e.ok("card", "answer", c.Identifier, "postgres")
	eventually(t, 30*time.Second, c.Identifier+" in review", func() bool { return e.card(c.Identifier).State == "review" })
	if side := e.side_(); !strings.Contains(side, "prompt attempt 2: Work on "+c.Identifier+" (attempt 2); you asked: Which database should the cache use?") ||
		!strings.Contains(side, "the answer: postgres") {
		t.Fatalf("attempt 2's prompt lacks the question and answer:\n%s", side)
	}
	var rs []struct {
		Outcome string `json:"outcome"`
		Counted bool   `json:"counted"`
		Report  *struct {
			Kind    string `json:"kind"`
			Summary string `json:"summary"`
		} `json:"report"`
	}
	e.jsonOf(&rs, "runs", c.Identifier)
	var done bool
	for _, r := range rs {
		if r.Counted {
			t.Errorf("a counted run: %+v", r)
		}
		if r.Report != nil && r.Report.Kind == "done" && r.Report.Summary == "used postgres as answered" && r.Outcome == "succeeded" {
			done = true
		}
	}
	if !done {
		t.Fatalf("runs = %+v, want a succeeded run with the done summary", rs)
	}
}

func TestCommandAgentCommentsAndProgressShowWhileLive(t *testing.T) {
	e := mcpEnv(t, testkit.SQLite, `mcp_call drover_comment '{"text":"found the flaky test in cache_test.go"}'
mcp_call drover_progress '{"note":"running the suite"}'
mcp_call drover_progress '{"note":"bad\u0007bell"}'
while [ ! -f "$SIDE.release" ]; do sleep 0.1; done
mcp_call drover_done '{"summary":"fixed"}'`)
	c := e.addCard("flaky")
	e.start()
	eventually(t, 30*time.Second, "the comment and progress while the run is live", func() bool {
		got := e.card(c.Identifier)
		var comment, progress bool
		for _, ev := range got.Events {
			comment = comment || (ev.Type == "commented" && strings.Contains(ev.Reason, "found the flaky test"))
			progress = progress || (ev.Type == "agent_progress" && ev.Reason == "running the suite" && ev.RunID != "")
		}
		return got.State == "in_progress" && comment && progress
	})
	text := e.ok("card", "show", c.Identifier)
	if !strings.Contains(text, "found the flaky test in cache_test.go") || !strings.Contains(text, "running the suite") {
		t.Errorf("drover card show lacks the agent's comment or progress:\n%s", text)
	}
	rs := e.runs(c.Identifier)
	if len(rs) != 1 {
		t.Fatalf("runs = %+v", rs)
	}
	if logs := e.ok("logs", rs[0].ID); !strings.Contains(logs, "[drover_progress] running the suite") ||
		!strings.Contains(logs, "[drover_comment] found the flaky test in cache_test.go") {
		t.Errorf("drover logs lacks the agent's notes:\n%s", logs)
	}
	if side := e.side_(); !strings.Contains(side, "control character") {
		t.Errorf("a note with a control character was not refused:\n%s", side)
	}
	if err := os.WriteFile(e.side+".release", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, c.Identifier+" in review", func() bool { return e.card(c.Identifier).State == "review" })
}
