// Package sim is drover's built-in simulated agent, for demos and tests. A
// card's spec scripts it: spec.sim is an array of kinds ("succeeded" or any
// failure kind) and attempt N plays element N (the last one repeats). It
// writes Claude Code stream-json output for the scripted outcome and reads it
// back through the real Claude parser, so classification runs on it exactly
// as on a real agent.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/claude"
	"github.com/drover-dev/drover/internal/policy"
)

// Spec is the part of a card's spec the sim reads.
type Spec struct {
	Sim      []string `json:"sim"`
	Delay    string   `json:"sim_delay"`    // per attempt, e.g. "2s" (default 300ms)
	CostUSD  *float64 `json:"sim_cost_usd"` // per attempt (default 0.01)
	Question string   `json:"sim_question"` // asked when the kind is input_required
	Reset    string   `json:"sim_reset"`    // how far ahead a rate/usage limit resets (default 20s)
	// RecordInput asks the sim to write what it was given (Input) to
	// InputPath(log path), for a test to read; off by default, since it
	// costs every run a file.
	RecordInput bool `json:"sim_record_input"`
	// Every makes a long run print: during sim_delay an assistant line
	// every this long (e.g. "2s"), each a progress report, so a fleet of
	// long-running sims prints as agents do at the cost of a timer each.
	Every string `json:"sim_every"`
}

// Kind is the agent kind of this package.
const Kind = "sim"

// Registration is the sim kind's entry in agent/registry. It runs in
// process; its output is Claude Code's, so Claude's parser reads it (as
// `drover classify --agent sim` does).
func Registration() agent.Registration {
	return agent.Registration{
		Kind:      Kind,
		Doc:       "the built-in simulated agent: spec.sim scripts the outcome of each attempt (demos and tests)",
		InProcess: true,
		New:       func(agent.Profile) (agent.Agent, error) { return New(), nil },
		NewParser: func() agent.Parser { return claude.NewParser() },
		// Like Claude Code, the sim resumes a session: the resumed run
		// keeps the session id (the arguments are not read).
		ResumeArgs: func(_ agent.Profile, id string) []string { return []string{"--resume", id} },
		ValidateSpec: func(spec []byte) error {
			_, err := ParseSpec(spec)
			return err
		},
	}
}

// Agent is the simulated agent.
type Agent struct{}

// New returns the simulated agent.
func New() agent.Agent { return Agent{} }

// ParseSpec reads the sim fields of a card spec and checks them.
func ParseSpec(raw []byte) (Spec, error) {
	var s Spec
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return s, fmt.Errorf("spec.sim: %v", err)
		}
	}
	for i, k := range s.Sim {
		if k != string(policy.KindSucceeded) && !policy.Kind(k).Valid() {
			return s, fmt.Errorf("spec.sim[%d]: %q is not succeeded or a failure kind", i, k)
		}
	}
	for _, d := range []struct{ name, v string }{{"sim_delay", s.Delay}, {"sim_reset", s.Reset}, {"sim_every", s.Every}} {
		if d.v != "" {
			if _, err := time.ParseDuration(d.v); err != nil {
				return s, fmt.Errorf("spec.%s: %q is not a duration such as 2s", d.name, d.v)
			}
			if v, _ := time.ParseDuration(d.v); d.name == "sim_every" && v <= 0 {
				return s, fmt.Errorf("spec.sim_every: %q must be positive (or left out for no lines during sim_delay)", d.v)
			}
		}
	}
	return s, nil
}

// KindFor returns the kind attempt n (1-based) plays.
func (s Spec) KindFor(n int) policy.Kind {
	if len(s.Sim) == 0 {
		return policy.KindSucceeded
	}
	if n < 1 {
		n = 1
	}
	if n > len(s.Sim) {
		n = len(s.Sim)
	}
	return policy.Kind(s.Sim[n-1])
}

// Run implements agent.Agent. Its errors are *agent.InputError: the card's
// spec scripts the sim, so a run that cannot start is the spec's fault.
func (a Agent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	res, err := a.run(ctx, inv)
	if err != nil {
		err = &agent.InputError{Err: err}
	}
	return res, err
}

func (Agent) run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	spec, err := ParseSpec(inv.Card.Spec)
	if err != nil {
		return agent.Result{}, err
	}
	kind := spec.KindFor(inv.Run.Attempt)
	delay := 300 * time.Millisecond
	if spec.Delay != "" {
		delay, _ = time.ParseDuration(spec.Delay)
	}
	cost := 0.01
	if spec.CostUSD != nil {
		cost = *spec.CostUSD
	}
	reset := 20 * time.Second
	if spec.Reset != "" {
		reset, _ = time.ParseDuration(spec.Reset)
	}
	log, err := createLog(inv.LogPath)
	if err != nil {
		return agent.Result{}, err
	}
	if log != nil {
		defer log.Close()
	}
	// The lines go to the log in one write per burst: flush is called
	// before the sim waits and when it returns, so `drover logs -f` sees
	// each line before any pause, with a write per burst instead of per line.
	var pending []byte
	flush := func() {
		if log != nil && len(pending) > 0 {
			log.Write(pending)
		}
		pending = pending[:0]
	}
	defer flush()
	p := claude.NewParser()
	emit := func(v any) {
		b, _ := json.Marshal(v)
		pending = append(append(pending, b...), '\n')
		p.Feed(b)
		if inv.Progress != nil {
			line, in, out, c := p.Progress()
			inv.Progress(agent.Progress{LastLine: line, TokensIn: in, TokensOut: out, CostUSD: c})
		}
	}
	if spec.RecordInput {
		if err := recordInput(inv); err != nil {
			return agent.Result{}, err
		}
	}
	session := fmt.Sprintf("sim-%s", inv.Run.ID)
	if inv.ResumeSession != "" {
		session = inv.ResumeSession
	}
	emit(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "sim", "cwd": inv.Workspace})
	emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Working on %s (attempt %d): %s", inv.Card.Identifier, inv.Run.Attempt, inv.Card.Title)}}}})

	// Kinds that only the dispatcher can observe are played as such.
	forced := map[policy.Kind]string{policy.KindTimeout: "timeout", policy.KindStalled: "stall", policy.KindInterrupted: "shutdown", policy.KindCancelled: "cancel", policy.KindSpendLimit: "spend"}
	if how, ok := forced[kind]; ok {
		flush()
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		return agent.Result{Signals: policy.Signals{AgentKind: Kind, ExitCode: -1, Signaled: true, KilledFor: how, Structured: p.Structured(), Now: time.Now()},
			LastLine: "(simulated " + string(kind) + ")"}, nil
	}
	if kind == policy.KindAgentBlocked {
		flush() // the calls below may take a while
		// The agent blocks through its own calls, as a real one does through
		// drover mcp, then ends cleanly: the report decides the outcome.
		if inv.Calls != nil {
			if _, err := inv.Calls.Block(ctx, "simulated: the card asks for something that does not exist", "spec.sim",
				"edit the card (drover card edit "+inv.Card.Identifier+" --spec …), then drover card resume "+inv.Card.Identifier); err == nil {
				kind = policy.KindSucceeded
			}
		}
		if kind == policy.KindAgentBlocked { // no calls to make (or refused): say what it would have reported
			c := policy.Classification{Kind: kind, Message: "simulated agent_blocked", Source: policy.ReportSource + "sim"}
			return agent.Result{Signals: policy.Signals{AgentKind: Kind, ExitCode: 0, Now: time.Now()}, Forced: &c}, nil
		}
	}
	if kind == policy.KindWorkspaceSetup || kind == policy.KindNoProgress || kind == policy.KindVerifyFailed || kind == policy.KindRepeatedFailure ||
		kind == policy.KindNoChange || kind == policy.KindPushRejected || kind == policy.KindCheckFailed { // kinds drover finds outside the agent
		c := policy.Classification{Kind: kind, Message: "simulated " + string(kind), Source: "sim"}
		return agent.Result{Signals: policy.Signals{AgentKind: Kind, ExitCode: 1, Now: time.Now()}, Forced: &c}, nil
	}

	if delay > 0 { // no pause, nothing to see before it: one write at the end
		flush()
	}
	var every time.Duration
	if spec.Every != "" {
		every, _ = time.ParseDuration(spec.Every)
	}
	end := time.Now().Add(delay)
	for line := 1; ; line++ {
		wait := time.Until(end)
		if every > 0 && every < wait {
			wait = every
		}
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cause := "cancel"
			if c := context.Cause(ctx); c != nil && c != context.Canceled {
				cause = c.Error()
			}
			return agent.Result{Signals: policy.Signals{AgentKind: Kind, ExitCode: -1, Signaled: true, KilledFor: cause, Structured: p.Structured(), Now: time.Now()}}, nil
		case <-t.C:
		}
		if every > 0 && time.Now().Before(end) {
			emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Still working on %s: step %d", inv.Card.Identifier, line)}}}})
			flush()
		}
	}
	res, exit := outcome(kind, inv, spec, time.Now().Add(reset))
	res["type"] = "result"
	res["session_id"] = session
	res["num_turns"] = 3
	res["duration_ms"] = delay.Milliseconds()
	res["total_cost_usd"] = cost
	res["usage"] = map[string]any{"input_tokens": 1200 * inv.Run.Attempt, "output_tokens": 300, "cache_read_input_tokens": 0}
	emit(res)
	st := p.Structured()
	stdout := ""
	if b, err := json.Marshal(res); err == nil {
		stdout = string(b)
	}
	return agent.Result{Signals: policy.Signals{AgentKind: claude.Kind, ExitCode: exit, Structured: st, Stdout: stdout, Now: time.Now()},
		LastLine: fmt.Sprint(res["result"])}, nil
}

// Input is what the sim was given for one run, written as JSON to
// InputPath(log path) when the card's spec sets sim_record_input, so a test
// can see what an agent would receive.
type Input struct {
	Prompt        string `json:"prompt"`
	ResumeSession string `json:"resume_session"`
}

// InputPath is where the sim records the Input of the run logged at logPath.
func InputPath(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".sim-input.json"
}

// createLog creates the run's log (nil for no log path). The dispatcher has
// made its directory already; the directory is made here only when the
// create finds it missing, so the usual run costs one create, not a stat too.
func createLog(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		f, err = os.Create(path)
	}
	return f, err
}

func recordInput(inv agent.Invocation) error {
	if inv.LogPath == "" {
		return nil
	}
	b, _ := json.Marshal(Input{Prompt: inv.Prompt, ResumeSession: inv.ResumeSession})
	return os.WriteFile(InputPath(inv.LogPath), b, 0o644)
}

// outcome is the result object Claude Code prints for kind, and the exit code.
func outcome(kind policy.Kind, inv agent.Invocation, spec Spec, resetAt time.Time) (map[string]any, int) {
	fail := func(status any, text string) (map[string]any, int) {
		return map[string]any{"subtype": "success", "is_error": true, "api_error_status": status, "result": text}, 1
	}
	switch kind {
	case policy.KindSucceeded:
		return map[string]any{"subtype": "success", "is_error": false, "result": "Done: " + inv.Card.Title}, 0
	case policy.KindRateLimited:
		return fail(429, fmt.Sprintf("API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 30,000 input tokens per minute. retry-after: %d", int(math.Ceil(time.Until(resetAt).Seconds()))))
	case policy.KindUsageLimited:
		return fail(429, fmt.Sprintf("You've hit your session limit · resets %s (UTC)", strings.ToLower(resetAt.UTC().Add(time.Minute).Format("3:04pm"))))
	case policy.KindQuotaExhausted:
		return fail(400, "Credit balance is too low")
	case policy.KindProviderUnavailable:
		return fail(nil, "API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment.")
	case policy.KindNetwork:
		return fail(nil, "API Error: Unable to connect to API (ConnectionRefused)")
	case policy.KindAuthFailed:
		return fail(401, "Invalid API key · Fix external API key")
	case policy.KindConfigError:
		return fail(404, "There's an issue with the selected model (claude-sim). It may not exist or you may not have access to it. Run --model to pick a different model.")
	case policy.KindInvalidInput:
		return fail(nil, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
	case policy.KindContextExhausted:
		return fail(400, "Prompt is too long · the request is ~215384 tokens (limit 200000)")
	case policy.KindPermissionDenied:
		// A tool the agent may not use inside its sandbox; an API 403 is
		// the key's (auth_failed), not the card's.
		return fail(nil, "Error: EACCES: permission denied, open '/etc/drover-protected.conf'")
	case policy.KindRefused:
		r, _ := fail(nil, "API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup).")
		r["stop_reason"] = "refusal"
		return r, 1
	case policy.KindInputRequired:
		q := spec.Question
		if q == "" {
			q = "Which environment should I deploy to?"
		}
		return map[string]any{"subtype": "success", "is_error": false, "result": q,
			"permission_denials": []any{map[string]any{"tool_name": "AskUserQuestion", "tool_use_id": "sim", "tool_input": map[string]any{"question": q}}}}, 0
	case policy.KindMaxTurns:
		return map[string]any{"subtype": "error_max_turns", "is_error": true, "result": "Reached maximum number of turns (3)"}, 1
	case policy.KindAgentFailed:
		return map[string]any{"subtype": "success", "is_error": true, "result": ""}, 1
	}
	return fail(nil, "simulated failure: the agent printed something nobody has seen before")
}
