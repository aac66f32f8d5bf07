package realcli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// The answer reaches the agent: a card parks on the agent's question, an
// operator answers it with drover card answer, and the next attempt resumes
// the same session of the real CLI (claude --resume, codex exec resume).
// The fake provider's request log is the proof: that attempt's first request
// carries the earlier conversation (the question) and the answer as the new
// user message.
func TestClaudeCodeResume(t *testing.T) { resumeMatrix(t, "claude") }

func TestCodexResume(t *testing.T) { resumeMatrix(t, "codex") }

// TestClaudeCodeSandboxedResume and TestCodexSandboxedResume are the same
// inside the sandbox: each run's HOME is fresh there but for the card's own
// home (.drover/homes/<card>), where the CLI left its session
// (~/.claude/projects, $CODEX_HOME/sessions) for the answered attempt.
func TestClaudeCodeSandboxedResume(t *testing.T) {
	gate.Bwrap.Require(t)
	resumeMatrix(t, "claude", func(c *cli) { c.sandbox = true })
}

func TestCodexSandboxedResume(t *testing.T) {
	gate.Bwrap.Require(t)
	resumeMatrix(t, "codex", func(c *cli) { c.sandbox = true })
}

const (
	resumeQuestion = "Deploy to staging or production?"
	resumeAnswer   = "staging"
)

// resumeSteps is what the provider answers, per kind: the question (Claude
// calls AskUserQuestion, which print mode denies, then ends its turn; the
// OpenAI shape ends with the QUESTION: line), then after the answer a
// finished task.
var resumeSteps = map[string][]fp.Step{
	"claude": {fp.Question(resumeQuestion), fp.Success("I need a decision: " + resumeQuestion), fp.Success("Done: deployed to staging.")},
	"codex":  {fp.Question(resumeQuestion), fp.Success("Done: deployed to staging.")},
}

func resumeMatrix(t *testing.T, kind string, opts ...func(*cli)) {
	for _, c := range installed(t, kind) {
		for _, o := range opts {
			o(&c)
		}
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			resumeCell(t, c)
		})
	}
}

func resumeCell(t *testing.T, c cli) {
	s := scenario{name: "resume"}
	p := fp.New(t)
	p.Script(marker(s), resumeSteps[c.kind]...)
	h := &harness{t: t, dir: t.TempDir()}
	var prof strings.Builder
	fmt.Fprintf(&prof, "default: %s\nprofiles:\n  %s:\n    kind: %s\n    command: %s\n    timeout: 300s\n    stall_timeout: 180s\n",
		profName(s), profName(s), c.kind, c.bin)
	env := h.profileEnv(c, s, p.URL())
	if c.sandbox {
		prof.WriteString(h.sandboxLine(c, s))
	}
	prof.WriteString("    env:\n")
	writeEnvYAML(&prof, env)
	testkit.NewWorkflow().
		Set("agents", prof.String()).
		Set("policy", "max_attempts: 3\nbackoff: {base: 10m, max: 10m, jitter: 0}").
		Set("dispatch", "max_concurrent: 1\npoll_interval: 500ms").
		Write(t, h.dir)
	var cd card
	h.jsonOf(&cd, "card", "add", "--title", marker(s)+": deploy the fix", "--state", "ready")
	h.serve()
	deadline := time.Now().Add(10 * time.Minute)

	parked := h.settled(cd.Identifier, deadline)
	if parked.State != "awaiting_input" || len(parked.Runs) != 1 || parked.Runs[0].Kind != "input_required" {
		t.Fatalf("%s did not park on the question: state %s (%s), runs %+v\nrequests: %s\nlog:\n%s",
			cd.Identifier, parked.State, parked.StateReason, parked.Runs, requestLog(p, marker(s)), h.runLog(parked))
	}
	first := byAttempt(parked.Runs, 1)
	if first.SessionID == "" {
		t.Fatalf("the parked run reported no session id: %+v", first)
	}
	if q := h.parkedQuestion(cd.Identifier); !strings.Contains(q, resumeQuestion) {
		t.Errorf("drover status shows the question %q, want it to hold %q", q, resumeQuestion)
	}
	before := len(p.Marked(marker(s)))

	if _, err := h.drover("card", "answer", cd.Identifier, resumeAnswer); err != nil {
		t.Fatal(err)
	}
	done := h.settledAfter(cd.Identifier, 2, deadline)
	second := byAttempt(done.Runs, 2)
	if done.State != "review" || second.Kind != "succeeded" {
		t.Errorf("after the answer %s is %s (%s), run %+v; want review after a succeeded run", cd.Identifier, done.State, done.StateReason, second)
	}
	if second.SessionID != first.SessionID {
		t.Errorf("the answered attempt ran session %q, want the parked run's %q resumed", second.SessionID, first.SessionID)
	}
	if !resumedArgv(c.kind, second.Argv, first.SessionID) {
		t.Errorf("the answered attempt ran %q, want it to resume session %s", second.Argv, first.SessionID)
	}

	reqs := p.Marked(marker(s))
	if len(reqs) <= before {
		t.Fatalf("no request reached the provider after the answer\nrequests: %s", requestLog(p, marker(s)))
	}
	body := reqs[before].Body
	history, last, err := conversation(c.kind, body)
	if err != nil {
		t.Fatalf("the resumed attempt's first request: %v\n%s", err, body)
	}
	if !strings.Contains(history, resumeQuestion) {
		t.Errorf("the resumed attempt's first request does not carry the earlier conversation (the question %q); its messages before the last:\n%s", resumeQuestion, history)
	}
	if !strings.Contains(last, "The answer:\n"+resumeAnswer) {
		t.Errorf("the resumed attempt's new user message is %q, want it to carry the answer %q", last, resumeAnswer)
	}
}

// resumedArgv reports whether argv resumes session id the kind's way.
func resumedArgv(kind string, argv []string, id string) bool {
	i := slices.Index(argv, id)
	switch kind {
	case "claude":
		return i > 0 && argv[i-1] == "--resume"
	case "codex":
		return i > 0 && slices.Contains(argv, "exec") && slices.Contains(argv, "resume")
	}
	return false
}

// conversation splits a request body into the text of its messages before
// the last one and the text of the last one, which must be the user's.
func conversation(kind, body string) (history, last string, err error) {
	type msg struct {
		role, text string
	}
	var msgs []msg
	switch kind {
	case "claude": // Anthropic Messages API: messages[].content is a string or blocks
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			return "", "", err
		}
		for _, m := range req.Messages {
			msgs = append(msgs, msg{m.Role, contentText(m.Content)})
		}
	case "codex": // OpenAI Responses API: input[] items
		var req struct {
			Input []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			return "", "", err
		}
		for _, it := range req.Input {
			var m struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(it, &m)
			msgs = append(msgs, msg{m.Role, contentText(m.Content) + " " + string(it)})
		}
	}
	if len(msgs) == 0 {
		return "", "", fmt.Errorf("no messages")
	}
	n := len(msgs) - 1
	if msgs[n].role != "user" {
		return "", "", fmt.Errorf("the last message is %q's, not the user's", msgs[n].role)
	}
	var b strings.Builder
	for _, m := range msgs[:n] {
		fmt.Fprintf(&b, "[%s] %s\n", m.role, m.text)
	}
	return b.String(), msgs[n].text, nil
}

// contentText is the text of a message content: a string, or the text (and
// tool inputs and results) of its blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []map[string]any
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		for _, k := range []string{"text", "input", "content"} {
			switch v := b[k].(type) {
			case string:
				parts = append(parts, v)
			case nil:
			default:
				j, _ := json.Marshal(v)
				parts = append(parts, string(j))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// byAttempt is the run of attempt n (a zero run when there is none).
func byAttempt(runs []run, n int) run {
	for _, r := range runs {
		if r.Attempt == n {
			return r
		}
	}
	return run{}
}

// settledAfter waits until the card's run of attempt n finished and the
// card is routed.
func (h *harness) settledAfter(id string, n int, deadline time.Time) card {
	h.t.Helper()
	for {
		var cd card
		h.jsonOf(&cd, "card", "show", id)
		if r := byAttempt(cd.Runs, n); r.FinishedAt != nil && cd.State != "in_progress" && cd.State != "ready" {
			return cd
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s did not settle after %d runs: state %s, runs %+v", id, n, cd.State, cd.Runs)
		}
		time.Sleep(time.Second)
	}
}
