package realcli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// TestCodexAppServer runs a codex profile in app-server mode (Symphony's
// `codex app-server`) with the real Codex CLI through drover serve: the
// first run works two continuation turns after its first, then the model
// calls request_user_input, so the card parks with the question; after
// `drover card answer` the next run resumes the same thread with the
// answer and ends it with drover_done. The fake provider's request log
// proves the thread: every request carries its id, and the answer's
// request carries the turns before it.
func TestCodexAppServer(t *testing.T) {
	for _, c := range installed(t, "codex") {
		t.Run(c.version, func(t *testing.T) { appServerRun(t, c) })
	}
}

func appServerRun(t *testing.T, c cli) {
	p := fp.New(t)
	h := &harness{t: t, dir: t.TempDir()}
	s := scenario{name: "appserver"}
	const question = "Deploy to staging or production?"
	p.Script(marker(s),
		fp.Success("Turn one: read the card."),
		fp.Success("Turn two: wrote the change."),
		fp.ToolUse("request_user_input", `{"questions":[{"id":"env","header":"Target","question":"`+question+`","options":[{"label":"staging","description":"the staging cluster"},{"label":"production","description":"the live cluster"}]}]}`),
		fp.ToolUse("drover_done", `{"summary":"Deployed to staging as answered."}`),
		fp.Success("Deployed to staging."),
	)
	h.writeAppServerWorkflow(c, s, p.URL())
	var cd card
	h.jsonOf(&cd, "card", "add", "--title", marker(s)+": deploy the service", "--state", "ready")
	h.serve()
	deadline := time.Now().Add(10 * time.Minute)

	parked := h.settled(cd.Identifier, deadline)
	r := parked.Runs[0]
	if parked.State != "awaiting_input" || r.Kind != "input_required" || r.Counted {
		t.Fatalf("after the first run: card %s (%s), run %s counted=%v (%s)\nrequests: %s\nlog:\n%s", parked.State, parked.StateReason, r.Kind, r.Counted, r.Error,
			requestLog(p, marker(s)), h.runLog(parked))
	}
	var q struct {
		Events []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	h.jsonOf(&q, "card", "show", cd.Identifier)
	asked := false
	for _, e := range q.Events {
		asked = asked || (e.Type == "parked" && strings.Contains(string(e.Data), question))
	}
	if !asked {
		t.Errorf("no parked event carries the question %q: %+v", question, q.Events)
	}
	reqs := p.Marked(marker(s))
	if len(reqs) != 3 {
		t.Fatalf("first run made %d model requests, want 3 (a turn and two continuation turns):%s", len(reqs), requestLog(p, marker(s)))
	}
	for i, want := range []string{"Continuation turn 2 of 3", "Continuation turn 3 of 3"} {
		if !strings.Contains(reqs[i+1].Body, want) {
			t.Errorf("request %d lacks %q", i+2, want)
		}
	}

	if _, err := h.drover("card", "answer", cd.Identifier, "staging, please"); err != nil {
		t.Fatal(err)
	}
	var done card
	var second run
	for {
		h.jsonOf(&done, "card", "show", cd.Identifier)
		for _, rr := range done.Runs {
			if rr.ID != r.ID {
				second = rr
			}
		}
		if second.FinishedAt != nil && done.State != "in_progress" && done.State != "ready" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered card did not settle: %s, runs %+v", done.State, done.Runs)
		}
		time.Sleep(time.Second)
	}
	if done.State != "review" || second.Kind != "succeeded" {
		t.Fatalf("after the answer: card %s (%s), run %s (%s)\nrequests: %s\nlog:\n%s", done.State, done.StateReason, second.Kind, second.Error,
			requestLog(p, marker(s)), h.runLog(done))
	}
	reqs = p.Marked(marker(s))
	if len(reqs) != 5 {
		t.Fatalf("%d model requests in all, want 5 (the answer's turn: drover_done, then its end):%s", len(reqs), requestLog(p, marker(s)))
	}
	thread := reqs[0].Header.Get("Thread-Id")
	if thread == "" {
		t.Fatalf("the first request names no thread (headers %v)", reqs[0].Header)
	}
	for i, rq := range reqs {
		if got := rq.Header.Get("Thread-Id"); got != thread {
			t.Errorf("request %d is on thread %q, want %q: the answer did not continue the parked thread", i+1, got, thread)
		}
	}
	answer := reqs[3].Body
	for _, want := range []string{"staging, please", "Turn one: read the card.", "Turn two: wrote the change.", "request_user_input"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer's request lacks %q: the thread's history did not come along", want)
		}
	}
}

// TestCodexAppServerBlocks: in app-server mode drover's store operations
// are dynamic tools too. The model notes progress, comments and blocks the
// card; the card ends blocked with the agent's what/where/how, one
// uncounted agent_blocked run, the progress and comment on the card, and
// no continuation turn after the block (max_turns 3).
func TestCodexAppServerBlocks(t *testing.T) {
	for _, c := range installed(t, "codex") {
		t.Run(c.version, func(t *testing.T) {
			p := fp.New(t)
			h := &harness{t: t, dir: t.TempDir()}
			s := scenario{name: "appserver_block"}
			p.Script(marker(s),
				fp.ToolUse("drover_progress", `{"note":"reading the card"}`),
				fp.ToolUse("drover_comment", `{"text":"the spec names an endpoint api.yaml lacks"}`),
				fp.ToolUse("drover_block", `{"what":"the endpoint /v2/pay does not exist","where":"spec.endpoint","how":"name an endpoint of api.yaml"}`),
				fp.Success("I blocked the card."),
				fp.Success("a continuation turn that must not happen"),
			)
			h.writeAppServerWorkflow(c, s, p.URL())
			var added card
			h.jsonOf(&added, "card", "add", "--title", marker(s)+": add the payment call", "--state", "ready")
			h.serve()
			h.settled(added.Identifier, time.Now().Add(6*time.Minute))
			var cd mcpCard
			h.jsonOf(&cd, "card", "show", added.Identifier)
			br := cd.BlockReason
			if cd.State != "blocked" || br == nil || br.What != "the endpoint /v2/pay does not exist" || br.Where != "spec.endpoint" || br.How != "name an endpoint of api.yaml" {
				t.Fatalf("card %s (%s), block reason %+v; want blocked with the agent's what/where/how\nrequests: %s\nlog:\n%s",
					cd.State, cd.StateReason, br, requestLog(p, marker(s)), h.runLog(cd.card))
			}
			if len(cd.Runs) != 1 || cd.Runs[0].Kind != "agent_blocked" || cd.Runs[0].Counted {
				t.Fatalf("runs %+v, want one uncounted agent_blocked run", cd.Runs)
			}
			var progress, comment bool
			for _, ev := range cd.Events {
				progress = progress || (ev.Type == "agent_progress" && ev.Reason == "reading the card" && ev.RunID == cd.Runs[0].ID)
				comment = comment || (ev.Type == "commented" && ev.Reason == "the spec names an endpoint api.yaml lacks")
			}
			if !progress || !comment {
				t.Errorf("progress event %v, comment event %v: %+v", progress, comment, cd.Events)
			}
			if n := len(p.Marked(marker(s))); n != 4 {
				t.Errorf("%d model requests, want 4 (three tool calls and the turn's end, no continuation turn):%s", n, requestLog(p, marker(s)))
			}
		})
	}
}

// writeAppServerWorkflow writes the WORKFLOW.md of the app-server tests: one
// codex profile in app-server mode (approvals never asked, read-only
// sandbox), three attempts, one run at a time, up to three turns.
func (h *harness) writeAppServerWorkflow(c cli, s scenario, base string) {
	var prof strings.Builder
	fmt.Fprintf(&prof, "default: cx\nprofiles:\n  cx:\n    kind: codex\n    command: %s\n    args: [app-server]\n    approval_policy: never\n    thread_sandbox: read-only\n    timeout: 300s\n    stall_timeout: 180s\n    env:\n", c.bin)
	writeEnvYAML(&prof, h.profileEnv(c, s, base))
	testkit.NewWorkflow().
		Set("agents", prof.String()).
		Set("policy", "max_attempts: 3\nbackoff: {base: 10m, max: 10m, jitter: 0}").
		Set("dispatch", "max_concurrent: 1\npoll_interval: 500ms\nmax_turns: 3").
		Write(h.t, h.dir)
}
