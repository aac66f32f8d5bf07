package policy

import "regexp"

// Phrase is one row of the built-in phrase table: a pattern written for a
// real message an agent CLI printed, and the kind that message means. Cite is
// that message, verbatim; every row has a test that feeds Cite to Classify.
type Phrase struct {
	Name string
	Re   *regexp.Regexp
	Kind Kind
	Cite string
}

func phrase(name, re string, kind Kind, cite string) Phrase {
	return Phrase{Name: name, Re: regexp.MustCompile(re), Kind: kind, Cite: cite}
}

// Phrases is the built-in phrase table, tried in order after typed signals;
// the first row that matches wins, so narrower rows come before broader ones.
// Messages come from the captured corpus (Claude Code 2.1.197, Codex CLI
// 0.171.0); other versions word things differently, which is why typed
// fields are read first and `unknown` is the answer when nothing matches.
var Phrases = []Phrase{
	// Plan usage windows, before the generic rate-limit rows.
	phrase("claude_usage_limit", `(?i)you['’]ve hit your (session|weekly|usage|daily|\w+) limit\b.*\bresets?\b`, KindUsageLimited,
		"You've hit your session limit · resets 10:18pm (UTC)"),
	phrase("codex_usage_limit", `(?i)you['’]ve hit your usage limit`, KindUsageLimited,
		"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:33 PM."),
	phrase("claude_usage_limit_epoch", `(?i)Claude AI usage limit reached\|\d{9,11}`, KindUsageLimited,
		"Claude AI usage limit reached|1735000000"),
	// The Anthropic API's own error types, as older Claude Code versions
	// print them ("API Error: 429 {…}"); from the API's documented errors.
	phrase("anthropic_rate_limit_error", `"type"\s*:\s*"rate_limit_error"`, KindRateLimited,
		`API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`),
	phrase("anthropic_overloaded_error", `"type"\s*:\s*"overloaded_error"`, KindProviderUnavailable,
		`API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
	phrase("anthropic_api_error", `"type"\s*:\s*"api_error"`, KindProviderUnavailable,
		`API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
	phrase("anthropic_authentication_error", `"type"\s*:\s*"authentication_error"`, KindAuthFailed,
		`API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
	phrase("anthropic_permission_error", `"type"\s*:\s*"permission_error"`, KindPermissionDenied,
		`API Error: 403 {"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`),
	// Billing.
	phrase("credit_balance_too_low", `(?i)credit balance is too low`, KindQuotaExhausted,
		"Credit balance is too low"),
	phrase("quota_exceeded", `(?i)\bquota exceeded\b.*\bbilling\b|insufficient_quota`, KindQuotaExhausted,
		"Quota exceeded. Check your plan and billing details."),
	// Rate limits.
	phrase("claude_rate_limit", `(?i)request rejected \(429\)|exceed the rate limit`, KindRateLimited,
		"API Error: Request rejected (429) · This request would exceed the rate limit for your organization (1f3e2a4b-0000-4000-8000-fakefakefake) of 30,000 input tokens per minute."),
	phrase("codex_rate_limit", `(?i)last status: 429\b|status 429 Too Many Requests`, KindRateLimited,
		"exceeded retry limit, last status: 429 Too Many Requests, request id: req_72f3e460811e45118135a748ec685357"),
	// Authentication and permission.
	phrase("claude_invalid_api_key", `(?i)invalid api key`, KindAuthFailed,
		"Invalid API key · Fix external API key"),
	phrase("claude_not_logged_in", `(?i)not logged in\b.*/login`, KindAuthFailed,
		"Not logged in · Please run /login"),
	phrase("claude_forbidden", `(?i)failed to authenticate\. API Error: 403\b`, KindPermissionDenied,
		"Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource."),
	phrase("codex_unauthorized", `(?i)unexpected status 401\b`, KindAuthFailed,
		"unexpected status 401 Unauthorized: Incorrect API key provided: sk-fake-*****************1234."),
	phrase("codex_forbidden", `(?i)unexpected status 403\b`, KindPermissionDenied,
		"unexpected status 403 Forbidden: Country, region, or territory not supported, url: http://127.0.0.1:18080/v1/responses"),
	// Input too large.
	phrase("claude_prompt_too_long", `(?i)prompt is too long`, KindContextExhausted,
		"Prompt is too long · the request is ~215384 tokens (limit 200000) but this conversation is only ~1536 tokens"),
	phrase("codex_context_window", `(?i)ran out of room in the model's context window`, KindContextExhausted,
		"Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying."),
	// Refusals.
	phrase("claude_usage_policy", `(?i)appears to violate our usage policy`, KindRefused,
		"API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup). Try rephrasing the request in a new session or change your model."),
	phrase("codex_cyber_policy", `(?i)flagged for possible cybersecurity risk`, KindRefused,
		"This request has been flagged for possible cybersecurity risk."),
	// Configuration.
	phrase("claude_model_issue", `(?i)issue with the selected model`, KindConfigError,
		"There's an issue with the selected model (claude-nonexistent-9). It may not exist or you may not have access to it. Run --model to pick a different model."),
	phrase("codex_model_missing", "(?i)the model `?[^ ]+`? does not exist", KindConfigError,
		"The model `gpt-nonexistent-9` does not exist or you do not have access to it."),
	phrase("claude_unknown_option", `(?im)^error: unknown option '`, KindConfigError,
		"error: unknown option '--bogus-flag'"),
	phrase("codex_unexpected_argument", `(?im)^error: unexpected argument '`, KindConfigError,
		"error: unexpected argument '--bogus-flag' found"),
	phrase("claude_stream_json_needs_verbose", `(?i)--output-format=stream-json requires --verbose`, KindConfigError,
		"Error: When using --print, --output-format=stream-json requires --verbose"),
	phrase("claude_empty_prompt", `(?i)input must be provided either through stdin or as a prompt argument`, KindInvalidInput,
		"Error: Input must be provided either through stdin or as a prompt argument when using --print"),
	// Limits inside the run.
	phrase("claude_max_turns", `(?i)reached maximum number of turns`, KindMaxTurns,
		"Reached maximum number of turns (1)"),
	phrase("claude_max_output_tokens", `(?i)response exceeded the \d+ output token maximum`, KindAgentFailed,
		"API Error: Claude's response exceeded the 64000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable."),
	// Stalls and timeouts, before the broader stream/connection rows.
	phrase("codex_idle_timeout", `(?i)idle timeout waiting for SSE`, KindStalled,
		"stream disconnected before completion: idle timeout waiting for SSE"),
	phrase("claude_request_timed_out", `(?im)^\s*request timed out\b`, KindTimeout,
		"Request timed out. If the API is slow to answer, or a proxy or gateway holds responses, set API_TIMEOUT_MS above 3000."),
	// Provider trouble.
	phrase("claude_overloaded", `(?i)\b529 overloaded\b|the API is at capacity`, KindProviderUnavailable,
		"API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment."),
	phrase("claude_server_side", `(?i)API Error: 5\d\d\b.*server-side issue`, KindProviderUnavailable,
		"API Error: 502 Bad Gateway. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:18080)."),
	phrase("claude_connection_lost", `(?i)connection to the API was lost`, KindProviderUnavailable,
		"API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again."),
	phrase("codex_stream_disconnected", `(?i)stream disconnected before completion`, KindProviderUnavailable,
		"stream disconnected before completion: An error occurred while processing your request. You can retry your request, or contact us through our help center at help.openai.com if the error persists."),
	// Plain HTTP status lines from a command agent (curl -f, HTTP clients).
	phrase("http_429", `(?i)\bHTTP(/\d(\.\d)?)?:? 429\b`, KindRateLimited,
		"curl: (22) The requested URL returned error: 429\nHTTP/1.1 429 Too Many Requests"),
	phrase("http_5xx_unavailable", `(?i)\bHTTP(/\d(\.\d)?)?:? (502|503|504)\b`, KindProviderUnavailable,
		"HTTP/1.1 503 Service Unavailable"),
	// Network: the request never reached a server.
	phrase("curl_dns", `(?i)could not resolve host`, KindNetwork,
		"curl: (6) Could not resolve host: api.example.com"),
	phrase("claude_unable_to_connect", `(?i)unable to connect to API \((ConnectionRefused|ECONNREFUSED|ECONNRESET|FailedToOpenSocket|ENOTFOUND|EAI_AGAIN|ETIMEDOUT)\)`, KindNetwork,
		"API Error: Unable to connect to API (ConnectionRefused)"),
}

// matchPhrase returns the first row of Phrases that matches text.
func matchPhrase(text string) (Phrase, bool) {
	if text == "" {
		return Phrase{}, false
	}
	for _, p := range Phrases {
		if p.Re.MatchString(text) {
			return p, true
		}
	}
	return Phrase{}, false
}
