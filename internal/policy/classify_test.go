package policy

import (
	"strings"
	"testing"
	"time"
)

func intp(i int) *int { return &i }

func TestClassifyOrder(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC)
	rateLimited := Structured{Present: true, IsError: true, Finished: true, APIErrorStatus: 429,
		ErrorMessages: []string{"API Error: Request rejected (429) · This request would exceed the rate limit"}}
	cases := []struct {
		name   string
		s      Signals
		rules  []Rule
		kind   Kind
		source string
	}{
		{"rule beats the agent's own signals", Signals{ExitCode: 3, Stderr: "NEEDS_HUMAN: which db?", Structured: Structured{Present: true, IsError: true, APIErrorStatus: 429}},
			[]Rule{{Name: "ask", Regex: `NEEDS_HUMAN`, Kind: KindInputRequired}}, KindInputRequired, "rule:ask"},
		{"drover's own stop beats a rule", Signals{ExitCode: -1, Signaled: true, Stdout: "--- FAIL: TestX", KilledFor: "shutdown"},
			[]Rule{{Name: "tests_failed", Regex: `FAIL:`, Kind: KindAgentFailed}}, KindInterrupted, "killed:shutdown"},
		{"rule needs all conditions", Signals{ExitCode: 3, Stderr: "NEEDS_HUMAN"},
			[]Rule{{Name: "ask", Regex: `NEEDS_HUMAN`, ExitCode: intp(4), Kind: KindInputRequired}}, KindUnknown, "exit_code:3"},
		{"rule by exit code", Signals{ExitCode: 75},
			[]Rule{{Name: "tempfail", ExitCode: intp(75), Kind: KindNetwork}}, KindNetwork, "rule:tempfail"},
		{"empty rule never matches", Signals{ExitCode: 0},
			[]Rule{{Name: "empty", Kind: KindRefused}}, KindSucceeded, "exit_code"},
		{"bad regex never matches", Signals{ExitCode: 0},
			[]Rule{{Name: "bad", Regex: `(`, Kind: KindRefused}}, KindSucceeded, "exit_code"},
		{"timeout kill", Signals{ExitCode: -1, Signaled: true, KilledFor: "timeout"}, nil, KindTimeout, "killed:timeout"},
		{"stall kill", Signals{ExitCode: -1, Signaled: true, KilledFor: "stall"}, nil, KindStalled, "killed:stall"},
		{"cancel kill", Signals{ExitCode: -1, Signaled: true, KilledFor: "cancel"}, nil, KindCancelled, "killed:cancel"},
		{"shutdown kill", Signals{ExitCode: -1, Signaled: true, KilledFor: "shutdown"}, nil, KindInterrupted, "killed:shutdown"},
		{"spend kill blocks", Signals{ExitCode: -1, Signaled: true, KilledFor: "spend"}, nil, KindSpendLimit, "killed:spend"},
		{"kill beats the structured error", Signals{ExitCode: 1, KilledFor: "timeout", Structured: rateLimited}, nil, KindTimeout, "killed:timeout"},
		{"clean exit", Signals{ExitCode: 0}, nil, KindSucceeded, "exit_code"},
		{"clean exit with denials", Signals{ExitCode: 0, Structured: Structured{Present: true, PermissionDenials: 1, ResultText: "Please grant permission"}},
			nil, KindInputRequired, "structured:permission_denials"},
		{"clean exit with a question", Signals{ExitCode: 0, Structured: Structured{Present: true, Finished: true, Question: "staging or production?", PermissionDenials: 1}},
			nil, KindInputRequired, "structured:question"},
		{"a question is not read from unstructured output", Signals{ExitCode: 0, Structured: Structured{Question: "staging?"}},
			nil, KindSucceeded, "exit_code"},
		{"exit 0 without an expected final message", Signals{ExitCode: 0, Structured: Structured{Present: true, Finished: true, NoFinalMessage: "the agent ended its turn without a message"}},
			nil, KindUnknown, "structured:no_agent_message"},
		{"is_error with exit 0 is a failure", Signals{ExitCode: 0, Structured: rateLimited, Now: now}, nil, KindRateLimited,
			"structured:api_error_status=429,phrase:rate_limit"},
		{"max turns subtype", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, Subtype: "error_max_turns"}},
			nil, KindMaxTurns, "structured:subtype"},
		{"refusal stop reason", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, StopReason: "refusal", ErrorType: "invalid_request"}},
			nil, KindRefused, "structured:stop_reason"},
		{"server_error without a phrase", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, ErrorType: "server_error", ErrorMessages: []string{"something new"}}},
			nil, KindProviderUnavailable, "structured:error_type=server_error"},
		{"phrase outside the family is ignored", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, ErrorType: "server_error", ErrorMessages: []string{"Credit balance is too low"}}},
			nil, KindProviderUnavailable, "structured:error_type=server_error"},
		{"unknown 400 falls to phrases", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, APIErrorStatus: 400, ErrorMessages: []string{"Credit balance is too low"}}},
			nil, KindQuotaExhausted, "phrase:credit_balance_too_low"},
		{"unknown 400 without phrase is unknown", Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, APIErrorStatus: 400, ErrorMessages: []string{"a brand new error"}}},
			nil, KindUnknown, "exit_code:1"},
		{"no text at all", Signals{ExitCode: 2}, nil, KindAgentFailed, "exit_code:2"},
		{"text but no match", Signals{ExitCode: 2, Stderr: "FAIL: TestFoo (0.01s)\n"}, nil, KindUnknown, "exit_code:2"},
		{"command not found", Signals{ExitCode: 127, Stderr: "sh: agent.sh: not found"}, nil, KindConfigError, "exit_code:127"},
		{"stray signal", Signals{ExitCode: -1, Signaled: true}, nil, KindAgentFailed, "signal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.s, c.rules)
			if got.Kind != c.kind || got.Source != c.source {
				t.Errorf("got %s (%s) %q; want %s (%s)", got.Kind, got.Source, got.Message, c.kind, c.source)
			}
		})
	}
}

// TestDenialMessage: the verdict on a denied permission names the tools,
// then the agent's last words when it had any (an opencode run rejected at
// a permission stops without any).
func TestDenialMessage(t *testing.T) {
	for text, want := range map[string]string{"Please grant it": "denied: bash; Please grant it", "": "denied: bash"} {
		c := Classify(Signals{Structured: Structured{Present: true, PermissionDenials: 1, DeniedTools: []string{"bash"}, ResultText: text}}, nil)
		if c.Kind != KindInputRequired || c.Message != want {
			t.Errorf("text %q: %s %q, want input_required %q", text, c.Kind, c.Message, want)
		}
	}
}

func TestUnknownKeepsTextWhole(t *testing.T) {
	text := "line one\nline two: something odd\nline three"
	c := Classify(Signals{ExitCode: 1, Stderr: text}, nil)
	if c.Kind != KindUnknown || c.Message != text {
		t.Errorf("got %s %q; want unknown with the whole text", c.Kind, c.Message)
	}
}

func TestRetryFields(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC)
	reset := time.Unix(1795990709, 0).UTC()
	t.Run("usage window reset from rate_limit_event", func(t *testing.T) {
		c := Classify(Signals{ExitCode: 1, Now: now, Structured: Structured{Present: true, IsError: true,
			ErrorType: "rate_limit", APIErrorStatus: 429, RateLimitStatus: "rejected", ResetsAt: reset,
			ErrorMessages: []string{"You've hit your session limit · resets 10:18pm (UTC)"}}}, nil)
		if c.Kind != KindUsageLimited || !c.RetryAt.Equal(reset) || c.RetryAfter != reset.Sub(now) {
			t.Errorf("got %s at %v after %v", c.Kind, c.RetryAt, c.RetryAfter)
		}
	})
	t.Run("usage window reset from the phrase", func(t *testing.T) {
		c := Classify(Signals{ExitCode: 1, Now: now, Stderr: "ERROR: You’ve hit your usage limit. … or try again at 9:33 PM."}, nil)
		want := time.Date(2026, 11, 29, 21, 33, 0, 0, time.UTC)
		if c.Kind != KindUsageLimited || !c.RetryAt.Equal(want) || c.RetryAfter != want.Sub(now) {
			t.Errorf("got %s at %v after %v", c.Kind, c.RetryAt, c.RetryAfter)
		}
	})
	t.Run("rate limit delay from api_retry", func(t *testing.T) {
		c := Classify(Signals{ExitCode: 1, Now: now, Structured: Structured{Present: true, IsError: true,
			ErrorType: "rate_limit", APIErrorStatus: 429, RetryStatuses: []int{429, 429}, RetryDelay: 2 * time.Second,
			ErrorMessages: []string{"API Error: Request rejected (429)"}}}, nil)
		if c.Kind != KindRateLimited || c.RetryAfter != 2*time.Second || !c.RetryAt.IsZero() {
			t.Errorf("got %s at %v after %v", c.Kind, c.RetryAt, c.RetryAfter)
		}
	})
	t.Run("backoff delays of 5xx are not a retry-after", func(t *testing.T) {
		c := Classify(Signals{ExitCode: 1, Now: now, Structured: Structured{Present: true, IsError: true,
			ErrorType: "server_error", APIErrorStatus: 500, RetryStatuses: []int{500}, RetryDelay: 600 * time.Millisecond}}, nil)
		if c.Kind != KindProviderUnavailable || c.RetryAfter != 0 {
			t.Errorf("got %s after %v", c.Kind, c.RetryAfter)
		}
	})
	t.Run("no retry time on kinds that do not wait on time", func(t *testing.T) {
		c := Classify(Signals{ExitCode: 1, Now: now, Stderr: "Invalid API key · retry-after: 20"}, nil)
		if c.Kind != KindAuthFailed || c.RetryAfter != 0 {
			t.Errorf("got %s after %v", c.Kind, c.RetryAfter)
		}
	})
}

func TestRuleValidate(t *testing.T) {
	ok := []Rule{{Name: "a", Regex: "x", Kind: KindNetwork}, {Name: "b", ExitCode: intp(3), Kind: KindSucceeded}, {Regex: "x", Kind: KindNetwork}}
	for _, r := range ok {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	bad := map[string]Rule{
		"regex":     {Name: "a", Regex: "(", Kind: KindNetwork},
		"exit_code": {Name: "a", Kind: KindNetwork},
		"kind":      {Name: "a", Regex: "x", Kind: "nope"},
	}
	for field, r := range bad {
		err := r.Validate()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%+v: err %v; want one naming %s", r, err, field)
		}
	}
}

// TestCommandStatusInTestOutput: a command agent's stderr may be a test
// suite's report, so a bare HTTP status in one ("--- FAIL", a test's
// "assert status 401") must not pause the profile; a status with a phrase
// of its family still decides, and so does a status outside test output
// (TestCommandReadsBareStructure).
func TestCommandStatusInTestOutput(t *testing.T) {
	for _, text := range []string{"GET /api/users: HTTP 404 Not Found\n--- FAIL: TestUsers", "assert status 401 == 200"} {
		c := Classify(Signals{AgentKind: "command", ExitCode: 1, Stderr: text}, nil)
		if Spec(c.Kind).ProfileLevel() {
			t.Errorf("command agent %q → %s (%s): a bare status pauses the profile", text, c.Kind, c.Source)
		}
	}
	c := Classify(Signals{AgentKind: "command", ExitCode: 1, Stderr: "unexpected status 401 Unauthorized: Incorrect API key provided"}, nil)
	if c.Kind != KindAuthFailed {
		t.Errorf("command agent with a 401 and a credentials phrase → %s (%s)", c.Kind, c.Source)
	}
	c = Classify(Signals{AgentKind: "codex", ExitCode: 1, Stderr: "unexpected status 404 Not Found"}, nil)
	if c.Kind != KindConfigError {
		t.Errorf("an agent CLI's own 404 → %s (%s); want config_error", c.Kind, c.Source)
	}
}

// TestIssueTenExamples: the runs issue 10 found unknown or of the wrong
// kind, as the adapters hand them over.
func TestIssueTenExamples(t *testing.T) {
	codex := func(msgs ...string) Signals {
		return Signals{AgentKind: "codex", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true, ErrorMessages: msgs}}
	}
	claude := func(errType, msg string) Signals {
		return Signals{AgentKind: "claude", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true, ErrorType: errType, ErrorMessages: []string{msg}}}
	}
	cases := []struct {
		name string
		s    Signals
		want Kind
	}{
		{"codex 503 at capacity", codex("Reconnecting... 1/5 (unexpected status 503 Service Unavailable: Selected model is at capacity. Please try a different model.)",
			"unexpected status 503 Service Unavailable: Selected model is at capacity. Please try a different model."), KindProviderUnavailable},
		{"codex 500 high demand", codex("We're currently experiencing high demand, which may cause temporary errors."), KindProviderUnavailable},
		{"codex missing key variable", codex("Missing environment variable: `OPENAI_API_KEY`."), KindAuthFailed},
		{"connection refused", claude("server_error", "API Error: Unable to connect to API (ConnectionRefused)"), KindNetwork},
		{"connection reset", claude("server_error", "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again."), KindNetwork},
		{"dns", claude("server_error", "API Error: Unable to connect to API (FailedToOpenSocket)"), KindNetwork},
		{"claude request timeout", claude("server_error", "Request timed out"), KindTimeout},
		{"usage limit reset", claude("", "Claude usage limit reached. Your limit will reset at 3pm (America/Santiago)."), KindUsageLimited},
		{"expired oauth", claude("", `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired."}}`), KindAuthFailed},
		{"credit too low", claude("", "Credit balance too low · Add funds: https://platform.claude.com/settings/billing"), KindQuotaExhausted},
		{"fetch failed", Signals{AgentKind: "gemini", ExitCode: 1, Stderr: "✕ [API Error: exception TypeError: fetch failed sending request]"}, KindNetwork},
	}
	for _, c := range cases {
		if got := Classify(c.s, nil); got.Kind != c.want {
			t.Errorf("%s → %s (%s); want %s", c.name, got.Kind, got.Source, c.want)
		}
	}
}

// TestForbiddenSplitsByStructure: an API's 403 is the key's or account's and
// pauses the profile (auth_failed); a tool or sandbox denial inside the agent
// stays the card's (permission_denied). Evidence: the real claude 2.1.197 and
// 2.1.332 and codex 0.171.0 403 runs against fakeprovider (tests/realcli
// forbidden cells; testdata permission_403 fixtures), corpus pc171/pc172.
func TestForbiddenSplitsByStructure(t *testing.T) {
	claude403 := Structured{Present: true, IsError: true, Finished: true, ErrorType: "authentication_failed", APIErrorStatus: 403,
		ErrorMessages: []string{"Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource."}}
	cases := []struct {
		name string
		s    Signals
		want Kind
		src  string
	}{
		{"claude authentication_failed + 403", Signals{AgentKind: "claude", ExitCode: 1, Structured: claude403}, KindAuthFailed, "structured:error_type=authentication_failed,api_error_status=403"},
		{"claude status 403 alone", Signals{AgentKind: "claude", ExitCode: 1, Structured: Structured{Present: true, IsError: true, APIErrorStatus: 403}}, KindAuthFailed, "structured:api_error_status=403"},
		{"codex unexpected status 403", Signals{AgentKind: "codex", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true,
			ErrorMessages: []string{"unexpected status 403 Forbidden: Country, region, or territory not supported, url: http://127.0.0.1/v1/responses"}}}, KindAuthFailed, "text:status=403"},
		{"gemini PERMISSION_DENIED", Signals{AgentKind: "gemini", ExitCode: 1, Stderr: `{"error":{"code":403,"message":"Permission denied on resource project demo.","status":"PERMISSION_DENIED"}}`}, KindAuthFailed, "text:status=403"},
		{"permission_error type", Signals{AgentKind: "claude", ExitCode: 1, Stdout: `{"type":"error","error":{"type":"permission_error","message":"no access"}}`}, KindAuthFailed, "text:type=permission_error"},
		{"tool EACCES", Signals{AgentKind: "claude", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true,
			ErrorMessages: []string{"Error: EACCES: permission denied, open '/etc/shadow'"}}}, KindPermissionDenied, "text:errno=EACCES"},
		{"sandbox denial", Signals{AgentKind: "codex", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true,
			ErrorMessages: []string{"exec failed: Permission denied (os error 13)"}}}, KindPermissionDenied, "text:errno=Permission denied"},
		{"command: a program's 403 with a sandbox denial", Signals{AgentKind: "command", ExitCode: 1, Stderr: "HTTP 403: blocked by the sandbox"}, KindPermissionDenied, "tool_permission"},
	}
	for _, c := range cases {
		got := Classify(c.s, nil)
		if got.Kind != c.want || !strings.Contains(got.Source, c.src) {
			t.Errorf("%s → %s (%s); want %s (%s)", c.name, got.Kind, got.Source, c.want, c.src)
		}
	}
}

// A command agent's stated wait is read from its stderr, where its error
// goes, before its stdout, where the code it printed may carry another.
func TestAStatedWaitComesFromTheError(t *testing.T) {
	c := Classify(Signals{ExitCode: 1, Now: time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC),
		Stdout: "patched server.py:\n    self.send_header('Retry-After', '3600')\n    self.send_header('Retry-After: 3600')",
		Stderr: "Error: 429 Too Many Requests; retry-after: 2"}, nil)
	if c.Kind != KindRateLimited || c.RetryAfter != 2*time.Second {
		t.Errorf("got %s after %s; want rate_limited after the error's 2s", c.Kind, c.RetryAfter)
	}
	c = Classify(Signals{ExitCode: 1, Stdout: "Error: 429 Too Many Requests; retry-after: 20"}, nil)
	if c.RetryAfter != 20*time.Second {
		t.Errorf("with nothing on stderr, stdout's wait: got %s, want 20s", c.RetryAfter)
	}
}
