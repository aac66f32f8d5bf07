package appserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

// run is one run of the Agent against the fake app-server (this test
// binary): what drover sent it, the result, and the verdict.
type run struct {
	sent []message
	res  agent.Result
	err  error
	cls  policy.Classification
}

func (r run) methods() []string {
	var out []string
	for _, m := range r.sent {
		out = append(out, m.Method)
	}
	return out
}

// param returns the first sent message of method, decoded.
func (r run) param(t *testing.T, method string, v any) {
	t.Helper()
	for _, m := range r.sent {
		if m.Method == method {
			if err := json.Unmarshal(m.Params, v); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("drover sent no %s; it sent %v", method, r.methods())
}

// turnInputs are the texts of each turn/start, in order.
func (r run) turnInputs() []string {
	var out []string
	for _, m := range r.sent {
		if m.Method != "turn/start" {
			continue
		}
		var p struct {
			Input []struct {
				Text string `json:"text"`
			} `json:"input"`
		}
		json.Unmarshal(m.Params, &p)
		if len(p.Input) > 0 {
			out = append(out, p.Input[0].Text)
		}
	}
	return out
}

type runOpts struct {
	profile func(*agent.Profile)
	inv     func(*agent.Invocation)
	cont    func(context.Context) bool
}

func runFake(t *testing.T, sc fakeScript, o runOpts) run {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(sc)
	logPath := filepath.Join(dir, "sent.jsonl")
	p := agent.Profile{Name: "cx", Kind: "codex", Command: os.Args[0], Args: []string{"app-server"}, MaxTurns: 3,
		Env: map[string]string{fakeScriptVar: string(b), fakeLogVar: logPath}}
	if o.profile != nil {
		o.profile(&p)
	}
	inv := agent.Invocation{Card: board.Card{ID: "c1", Identifier: "DRV-1", Title: "say hi", State: "in_progress", Spec: json.RawMessage(`{"env":"x"}`)},
		Prompt: "Work on DRV-1: say hi", Workspace: dir, LogPath: filepath.Join(dir, "run.log"), Continue: o.cont}
	if o.inv != nil {
		o.inv(&inv)
	}
	res, err := New(p, "codex").Run(context.Background(), inv)
	r := run{res: res, err: err, cls: policy.Classify(res.Signals, nil)}
	if f, ferr := os.Open(logPath); ferr == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.sent = append(r.sent, m)
			}
		}
	}
	return r
}

func always(context.Context) bool { return true }

func msg(text string) fakeStep { return fakeStep{Message: text} }

// TestContinuationTurns: while the card still wants work the run goes on
// with continuation turns on the same thread, up to max_turns; the run's
// tokens and final message are the thread's.
func TestContinuationTurns(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tokens: 100}, msg("one")}, {{Tokens: 50}, msg("two")}, {{Tokens: 25}, msg("three")}}},
		runOpts{cont: always})
	if r.err != nil {
		t.Fatal(r.err)
	}
	in := r.turnInputs()
	if len(in) != 3 || in[0] != "Work on DRV-1: say hi" || !strings.Contains(in[1], "Continuation turn 2 of 3 for DRV-1") || !strings.Contains(in[2], "turn 3 of 3") {
		t.Fatalf("turn inputs %q", in)
	}
	st := r.res.Signals.Structured
	if st.Turns != 3 || st.SessionID != "thr-fake" || st.ResultText != "three" || st.TokensIn != 175 || st.TokensOut != 3 {
		t.Errorf("structured %+v", st)
	}
	if r.cls.Kind != policy.KindSucceeded {
		t.Errorf("verdict %+v", r.cls)
	}
	want := []string{"initialize", "initialized", "thread/start", "turn/start", "turn/start", "turn/start"}
	if got := r.methods(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sent %v, want %v", got, want)
	}
	var ts struct {
		Cwd          string         `json:"cwd"`
		DynamicTools []any          `json:"dynamicTools"`
		Config       map[string]any `json:"config"`
	}
	r.param(t, "thread/start", &ts)
	if ts.Cwd == "" || len(ts.DynamicTools) != 3 || ts.Config["features.default_mode_request_user_input"] != true {
		t.Errorf("thread/start %+v", ts)
	}
}

// TestContinueStops: a card that no longer wants work (moved on) gets no
// further turn; without a Continue func there is one turn.
func TestContinueStops(t *testing.T) {
	sc := fakeScript{Turns: [][]fakeStep{{msg("done")}}}
	n := 0
	r := runFake(t, sc, runOpts{cont: func(context.Context) bool { n++; return n < 2 }})
	if got := len(r.turnInputs()); got != 2 {
		t.Errorf("%d turns, want 2 (Continue said yes once)", got)
	}
	r = runFake(t, sc, runOpts{})
	if got := len(r.turnInputs()); got != 1 || r.cls.Kind != policy.KindSucceeded {
		t.Errorf("%d turns (%+v), want 1 succeeded", got, r.cls)
	}
}

// TestDoneToolEndsTheRun: drover_done stops continuation turns and its
// summary is the run's result.
func TestDoneToolEndsTheRun(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolDone, Args: json.RawMessage(`{"summary":"said hi"}`)}}}}, runOpts{cont: always})
	st := r.res.Signals.Structured
	if len(r.turnInputs()) != 1 || st.ResultText != "said hi" || r.cls.Kind != policy.KindSucceeded {
		t.Errorf("turns %d, structured %+v, verdict %+v", len(r.turnInputs()), st, r.cls)
	}
}

// TestCardTool: drover_card answers with the card.
func TestCardTool(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolCard}}}}, runOpts{})
	if rt := r.res.Signals.Structured.ResultText; !strings.Contains(rt, `\"identifier\":\"DRV-1\"`) || !strings.Contains(rt, `\"spec\":{\"env\":\"x\"}`) || !strings.Contains(rt, `"success":true`) {
		t.Errorf("tool answer %s", rt)
	}
	r = runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: "nope"}}}}, runOpts{})
	if rt := r.res.Signals.Structured.ResultText; !strings.Contains(rt, `"success":false`) || !strings.Contains(rt, "no tool named nope") {
		t.Errorf("unknown tool answer %s", rt)
	}
}

// TestUserInputParks: request_user_input interrupts the turn and the run
// ends input_required with the question (header and options kept); the
// thread id is the session the next run resumes. No continuation turn.
func TestUserInputParks(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{msg("one")}, {{Ask: "Deploy to staging or production?"}}}}, runOpts{cont: always})
	if r.err != nil {
		t.Fatal(r.err)
	}
	st := r.res.Signals.Structured
	if r.cls.Kind != policy.KindInputRequired || r.cls.Source != "structured:question" {
		t.Fatalf("verdict %+v", r.cls)
	}
	if !strings.Contains(st.Question, "Env: Deploy to staging or production?") || !strings.Contains(st.Question, "staging (deploy to staging)") {
		t.Errorf("question %q", st.Question)
	}
	if st.SessionID != "thr-fake" || len(r.turnInputs()) != 2 {
		t.Errorf("session %q, %d turns", st.SessionID, len(r.turnInputs()))
	}
	var ti struct {
		ThreadID string `json:"threadId"`
		TurnID   string `json:"turnId"`
	}
	r.param(t, "turn/interrupt", &ti)
	if ti.ThreadID != "thr-fake" || ti.TurnID != "turn-2" {
		t.Errorf("interrupt %+v", ti)
	}
}

// TestAskHumanToolParks: drover_ask_human parks the card the same way.
func TestAskHumanToolParks(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolAskHuman, Args: json.RawMessage(`{"question":"Which region?","options":["eu","us"]}`)}}}}, runOpts{cont: always})
	if r.cls.Kind != policy.KindInputRequired || r.res.Signals.Structured.Question != "Which region? Options: eu; us" || len(r.turnInputs()) != 1 {
		t.Errorf("verdict %+v, question %q", r.cls, r.res.Signals.Structured.Question)
	}
}

// TestResumeContinuesTheThread: a run after an answer resumes the parked
// thread (thread/resume, never thread/start) with the answer as its first
// turn, and counts only its own tokens.
func TestResumeContinuesTheThread(t *testing.T) {
	r := runFake(t, fakeScript{OldTokens: 1000, Turns: [][]fakeStep{{{Tokens: 10}, msg("deployed to staging")}}}, runOpts{
		inv: func(inv *agent.Invocation) { inv.ResumeSession, inv.Prompt = "thr-parked", "The answer:\nstaging" }})
	if got := strings.Join(r.methods(), " "); got != "initialize initialized thread/resume turn/start" {
		t.Fatalf("sent %s", got)
	}
	var tr struct {
		ThreadID string `json:"threadId"`
	}
	r.param(t, "thread/resume", &tr)
	st := r.res.Signals.Structured
	if tr.ThreadID != "thr-parked" || st.SessionID != "thr-parked" || r.turnInputs()[0] != "The answer:\nstaging" || st.TokensIn != 10 {
		t.Errorf("resume %+v, structured %+v", tr, st)
	}
}

// TestApprovals: under approval_policy never drover accepts for the
// session; under any other (or none) it declines and records the denial,
// so the run parks with what was denied.
func TestApprovals(t *testing.T) {
	sc := fakeScript{Turns: [][]fakeStep{{{Approve: "rm -rf build"}}}}
	r := runFake(t, sc, runOpts{profile: func(p *agent.Profile) { p.ApprovalPolicy = "never" }})
	if rt := r.res.Signals.Structured.ResultText; !strings.Contains(rt, "acceptForSession") || r.cls.Kind != policy.KindSucceeded {
		t.Errorf("never: %q %+v", rt, r.cls)
	}
	var ts struct {
		ApprovalPolicy string `json:"approvalPolicy"`
	}
	r.param(t, "thread/start", &ts)
	if ts.ApprovalPolicy != "never" {
		t.Errorf("thread/start approvalPolicy %q", ts.ApprovalPolicy)
	}
	r = runFake(t, sc, runOpts{profile: func(p *agent.Profile) { p.ApprovalPolicy = "untrusted" }})
	st := r.res.Signals.Structured
	if !strings.Contains(st.ResultText, `"decline"`) || st.PermissionDenials != 1 || len(st.DeniedTools) != 1 || st.DeniedTools[0] != "command: rm -rf build" {
		t.Errorf("untrusted: %+v", st)
	}
	if r.cls.Kind != policy.KindInputRequired {
		t.Errorf("untrusted verdict %+v", r.cls)
	}
}

// TestSandboxSettingsSent: thread_sandbox goes with thread/start and
// turn_sandbox_policy with every turn/start.
func TestSandboxSettingsSent(t *testing.T) {
	pol := map[string]any{"type": "workspaceWrite", "networkAccess": false}
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{msg("ok")}}}, runOpts{profile: func(p *agent.Profile) {
		p.ThreadSandbox, p.TurnSandboxPolicy = "workspace-write", pol
	}})
	var ts struct {
		Sandbox string `json:"sandbox"`
	}
	r.param(t, "thread/start", &ts)
	var tu struct {
		SandboxPolicy map[string]any `json:"sandboxPolicy"`
	}
	r.param(t, "turn/start", &tu)
	if ts.Sandbox != "workspace-write" || tu.SandboxPolicy["type"] != "workspaceWrite" {
		t.Errorf("thread/start sandbox %q, turn/start sandboxPolicy %v", ts.Sandbox, tu.SandboxPolicy)
	}
}

// TestFailedTurnsClassify: a failed turn's codexErrorInfo is read as
// structure (status, kind of limit) and classified as exec mode's errors.
// The messages are codex 0.171.0's against the fake provider.
func TestFailedTurnsClassify(t *testing.T) {
	cases := []struct {
		name string
		fail string
		rate string
		kind policy.Kind
	}{
		{"401", `{"message":"unexpected status 401 Unauthorized: Incorrect API key provided","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}}}`, "", policy.KindAuthFailed},
		{"503", `{"message":"unexpected status 503 Service Unavailable: Selected model is at capacity.","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":503}}}`, "", policy.KindProviderUnavailable},
		{"429 rate", `{"message":"exceeded retry limit, last status: 429 Too Many Requests","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}`, "", policy.KindRateLimited},
		{"usage limit by info", `{"message":"You’ve hit your usage limit. Upgrade to Pro or try again at 9:33 PM.","codexErrorInfo":"usageLimitExceeded"}`, "", policy.KindUsageLimited},
		{"credit by the same info", `{"message":"Quota exceeded. Check your plan and billing details.","codexErrorInfo":"usageLimitExceeded"}`, "", policy.KindQuotaExhausted},
		{"usage limit by rate-limit event", `{"message":"exceeded retry limit, last status: 429 Too Many Requests","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}`,
			`{"rateLimitReachedType":"workspace_member_usage_limit_reached","primary":{"usedPercent":100,"resetsAt":1796130000}}`, policy.KindUsageLimited},
		{"context", `{"message":"Your input exceeds the context window of this model.","codexErrorInfo":"contextWindowExceeded"}`, "", policy.KindContextExhausted},
		{"no status, text has it (a provider 403 pauses the profile)", `{"message":"unexpected status 403 Forbidden: Country, region, or territory not supported","codexErrorInfo":"other"}`, "", policy.KindAuthFailed},
		{"connection refused", `{"message":"error sending request","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":null}}}`, "", policy.KindNetwork},
		{"model", `{"message":"model not found","codexErrorInfo":"modelNotFound"}`, "", policy.KindConfigError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps := []fakeStep{}
			if c.rate != "" {
				steps = append(steps, fakeStep{Rate: json.RawMessage(c.rate)})
			}
			steps = append(steps, fakeStep{Fail: json.RawMessage(c.fail)})
			r := runFake(t, fakeScript{Turns: [][]fakeStep{steps}}, runOpts{cont: always})
			if r.cls.Kind != c.kind {
				t.Errorf("kind %s (%s: %s), want %s", r.cls.Kind, r.cls.Source, r.cls.Message, c.kind)
			}
			if len(r.turnInputs()) != 1 {
				t.Errorf("%d turns after a failed turn, want 1", len(r.turnInputs()))
			}
		})
	}
}

// TestRetriesAreCounted: an error the app-server retries itself is a
// retry, not the run's error.
func TestRetriesAreCounted(t *testing.T) {
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Retry: "Reconnecting... 1/5 (unexpected status 500 Internal Server Error)"}, msg("ok")}}}, runOpts{})
	st := r.res.Signals.Structured
	if st.Retries != 1 || len(st.RetryStatuses) != 1 || st.RetryStatuses[0] != 500 || len(st.ErrorMessages) != 0 || r.cls.Kind != policy.KindSucceeded {
		t.Errorf("structured %+v, verdict %+v", st, r.cls)
	}
}

// TestThreadRefusedIsConfig: a JSON-RPC error answering thread/start is
// the profile's settings: a config error naming them.
func TestThreadRefusedIsConfig(t *testing.T) {
	r := runFake(t, fakeScript{ThreadError: "unknown variant `sometimes`, expected one of `untrusted`, `on-request`, `never`"}, runOpts{})
	var ce *ConfigError
	if !errors.As(r.err, &ce) || !errors.Is(r.err, agent.ErrConfig) || !strings.Contains(r.err.Error(), "approval_policy") {
		t.Fatalf("err %v", r.err)
	}
}

// TestExitMidConversation: an app-server that exits (even with status 0)
// before its turn ends has not succeeded.
func TestExitMidConversation(t *testing.T) {
	r := runFake(t, fakeScript{ExitAtTurn: 1, Turns: [][]fakeStep{{msg("never")}}}, runOpts{})
	if r.cls.Kind == policy.KindSucceeded || r.res.Signals.Structured.Finished {
		t.Errorf("verdict %+v, structured %+v", r.cls, r.res.Signals.Structured)
	}
	if !strings.Contains(strings.Join(r.res.Signals.Structured.ErrorMessages, "|"), "exited before the conversation ended") {
		t.Errorf("errors %q", r.res.Signals.Structured.ErrorMessages)
	}
}

// TestBadLinesAreRecorded: a line that is not a message is recorded and
// the conversation goes on.
func TestBadLinesAreRecorded(t *testing.T) {
	r := runFake(t, fakeScript{Garbage: true, Turns: [][]fakeStep{{msg("ok")}}}, runOpts{})
	st := r.res.Signals.Structured
	if len(st.ParseErrors) != 1 || !strings.Contains(st.ParseErrors[0], "not a JSON-RPC message") || r.cls.Kind != policy.KindSucceeded {
		t.Errorf("parse errors %q, verdict %+v", st.ParseErrors, r.cls)
	}
}

// TestMissingProgram: a command that is not there is a start failure, as
// for every kind.
func TestMissingProgram(t *testing.T) {
	r := runFake(t, fakeScript{}, runOpts{profile: func(p *agent.Profile) { p.Command = filepath.Join(t.TempDir(), "no-codex") }})
	if r.err == nil {
		t.Fatal("no error for a missing program")
	}
}

// fakeCalls records the agent's store calls, refusing with err when set.
type fakeCalls struct {
	got []string
	err error
}

func (f *fakeCalls) Block(_ context.Context, what, where, how string) (board.AgentReport, error) {
	f.got = append(f.got, "block "+what+" | "+where+" | "+how)
	return board.AgentReport{Kind: board.ReportBlock, What: what, Where: where, How: how}, f.err
}
func (f *fakeCalls) Ask(context.Context, string, []string) (board.AgentReport, error) {
	f.got = append(f.got, "ask")
	return board.AgentReport{}, f.err
}
func (f *fakeCalls) Done(context.Context, string) (board.AgentReport, error) {
	f.got = append(f.got, "done")
	return board.AgentReport{}, f.err
}
func (f *fakeCalls) Comment(_ context.Context, text string) (board.Comment, error) {
	f.got = append(f.got, "comment "+text)
	return board.Comment{}, f.err
}
func (f *fakeCalls) Progress(_ context.Context, note string) (board.Event, error) {
	f.got = append(f.got, "progress "+note)
	return board.Event{}, f.err
}

// offered are the names of the dynamic tools thread/start offered.
func (r run) offered(t *testing.T) []string {
	var p struct {
		DynamicTools []struct {
			Name string `json:"name"`
		} `json:"dynamicTools"`
	}
	r.param(t, "thread/start", &p)
	var out []string
	for _, d := range p.DynamicTools {
		out = append(out, d.Name)
	}
	return out
}

// TestStoreToolsGoThroughCalls: drover_progress, drover_comment and
// drover_block reach the run's Calls (the fenced service) with the agent's
// words, in the order the agent called them; a block ends the turns (no
// continuation turn, though the card still wants work) and the model is
// told so.
func TestStoreToolsGoThroughCalls(t *testing.T) {
	calls := &fakeCalls{}
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{
		{Tool: ToolProgress, Args: json.RawMessage(`{"note":"reading the card"}`)},
		{Tool: ToolComment, Args: json.RawMessage(`{"text":"found the flaky test"}`)},
		{Tool: ToolBlock, Args: json.RawMessage(`{"what":"no endpoint /v2/pay","where":"spec.endpoint","how":"name one of api.yaml"}`)},
	}}}, runOpts{cont: always, inv: func(inv *agent.Invocation) { inv.Calls = calls }})
	want := []string{"progress reading the card", "comment found the flaky test", "block no endpoint /v2/pay | spec.endpoint | name one of api.yaml"}
	if strings.Join(calls.got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(calls.got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(r.turnInputs()); n != 1 {
		t.Errorf("%d turns after drover_block, want 1", n)
	}
	if rt := r.res.Signals.Structured.ResultText; !strings.Contains(rt, "blocks the card") || !strings.Contains(rt, `"success":true`) {
		t.Errorf("tool answer %s", rt)
	}
	if got := strings.Join(r.offered(t), ","); got != "drover_card,drover_ask_human,drover_done,drover_block,drover_comment,drover_progress" {
		t.Errorf("offered %s", got)
	}
}

// TestStoreToolRefused: a call the service refuses is the tool's failure
// with the service's words, and a refused block does not end the turns.
// Without Calls the store tools are not offered, and a call of one fails.
func TestStoreToolRefused(t *testing.T) {
	calls := &fakeCalls{err: errors.New("what is empty: say what is wrong")}
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolBlock, Args: json.RawMessage(`{"what":""}`)}}, {msg("went on")}}},
		runOpts{cont: always, inv: func(inv *agent.Invocation) { inv.Calls = calls }})
	if n := len(r.turnInputs()); n != 3 {
		t.Errorf("%d turns after a refused block, want max_turns (3)", n)
	}
	if len(calls.got) != 1 {
		t.Errorf("calls %v", calls.got)
	}
	r = runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolBlock, Args: json.RawMessage(`{"what":"x","where":"y","how":"z"}`)}}}}, runOpts{})
	if rt := r.res.Signals.Structured.ResultText; !strings.Contains(rt, `"success":false`) || !strings.Contains(rt, "no tool named drover_block") {
		t.Errorf("tool answer without Calls %s", rt)
	}
	if got := strings.Join(r.offered(t), ","); got != "drover_card,drover_ask_human,drover_done" {
		t.Errorf("offered without Calls %s", got)
	}
}
