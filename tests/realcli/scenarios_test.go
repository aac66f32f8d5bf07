package realcli

import (
	"time"

	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// scenario is one scripted provider behaviour and what drover must make of it.
type scenario struct {
	name  string
	steps []fp.Step
	url   string // "" the fake provider, "closed" nothing listening, "dns" a name that never resolves
	// Profile limits ("" = 300s and 180s: long, so a slow start on a loaded
	// machine is not taken for a stall); short where a kill is the point.
	timeout, stall string
	maxTurns       int      // dispatch.max_turns for this scenario's serve (claude --max-turns; gemini: model.maxSessionTurns in its settings)
	kinds          []string // the CLI kinds it applies to (nil = all)
	// Credentials: "" a dummy API key, "oauth" a dummy subscription token
	// (claude), "none" no credential at all.
	auth string
	env  []string // extra KEY=VALUE for the profile
	want outcome
}

// outcome is what an operator would expect after the card's first run.
type outcome struct {
	kind    string // the run's kind ("a|b": either is honest)
	state   string // the card's state once the run is routed
	counted bool   // the run spent the card's max_attempts
	paused  bool   // the profile is paused
	held    bool   // the profile is held with probes (open, not paused)
	blocked bool   // the card carries a block reason (what/where/how)
	// question, when set, must show in drover status for the parked card.
	question string
}

var (
	defer_    = func(kind string) outcome { return outcome{kind: kind, state: "ready"} }
	pause     = func(kind string) outcome { return outcome{kind: kind, state: "ready", paused: true} }
	hold      = func(kind string) outcome { return outcome{kind: kind, state: "ready", held: true} }
	block     = func(kind string) outcome { return outcome{kind: kind, state: "blocked", blocked: true} }
	retryKill = func(kind string) outcome { return outcome{kind: kind, state: "ready", counted: true} }
)

var scenarios = []scenario{
	{name: "success", steps: []fp.Step{fp.Success("Done: said hi.")}, want: outcome{kind: "succeeded", state: "review"}},
	{name: "rate_limit", steps: []fp.Step{fp.RateLimit(40 * time.Second)}, want: defer_("rate_limited")},
	{name: "unauthorized", steps: []fp.Step{fp.Unauthorized()}, want: pause("auth_failed")},
	{name: "forbidden", steps: []fp.Step{fp.Forbidden()}, want: pause("auth_failed")},
	{name: "credit_balance", steps: []fp.Step{fp.CreditBalance()}, want: hold("quota_exhausted")},
	{name: "usage_limit", steps: []fp.Step{fp.UsageLimit(time.Now().Add(3 * time.Hour))}, auth: "oauth", want: defer_("usage_limited")},
	{name: "missing_key", auth: "none", want: pause("auth_failed|config_error")},
	{name: "server_error", steps: []fp.Step{fp.ServerError()}, want: defer_("provider_unavailable")},
	{name: "unavailable", steps: []fp.Step{fp.Unavailable()}, want: defer_("provider_unavailable")},
	{name: "overloaded", steps: []fp.Step{fp.Overloaded()}, want: defer_("provider_unavailable")},
	{name: "conn_refused", url: "closed", timeout: "90s", want: defer_("network")},
	{name: "dns_failure", url: "dns", timeout: "90s", want: defer_("network")},
	{name: "reset_midstream", steps: []fp.Step{fp.ResetMidStream()}, want: defer_("network")},
	{name: "hang", steps: []fp.Step{fp.Hang()}, timeout: "30s", stall: "5m", want: retryKill("timeout")},
	{name: "api_timeout", steps: []fp.Step{fp.Hang()}, kinds: []string{"claude"}, env: []string{"API_TIMEOUT_MS=4000"}, want: retryKill("timeout")},
	{name: "stall", steps: []fp.Step{fp.Stall()}, timeout: "5m", stall: "20s", want: retryKill("stalled")},
	{name: "prompt_too_long", steps: []fp.Step{fp.PromptTooLong()}, want: block("context_exhausted")},
	{name: "refusal", steps: []fp.Step{fp.Refusal()}, want: block("refused")},
	{name: "question", steps: []fp.Step{fp.Question("Deploy to staging or production?"), fp.Success("I need to know: deploy to staging or production?")}, want: outcome{kind: "input_required", state: "awaiting_input", question: "Deploy to staging or production?"}},
	{name: "max_turns", steps: []fp.Step{fp.ToolUse("Glob", `{"pattern":"*"}`)}, maxTurns: 2, kinds: []string{"claude", "gemini"}, want: retryKill("max_turns")},
}
