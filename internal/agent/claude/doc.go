// Package claude reads what Claude Code prints in print mode: one JSON event
// per line with --output-format stream-json --verbose, or a single result
// object with --output-format json. kind.go registers the kind.
//
// What real runs taught (2.1.197 from /work/shared/agent-output, 2.1.197 and
// 2.1.332 under tests/realcli against internal/testkit/fakeprovider):
//
//   - Every API failure exits 1 with result.is_error true and nothing on
//     stderr; result.subtype stays "success" except error_max_turns (and
//     error_during_execution). stderr carries only bad-usage errors.
//   - Read structure before text: the assistant message's "error"
//     (rate_limit, authentication_failed, billing_error, server_error, …),
//     result.api_error_status (null for transport failures and timeouts),
//     result.terminal_reason ("completed" in 2.1.197; "api_error" for API
//     failures in 2.1.332) and, new in 2.1.3xx, "api_error" on the assistant
//     message and the result: "connection_failed" for refused, reset and DNS
//     failures, which this parser passes on (Structured.APIError).
//   - Wording changes between versions. 2.1.332 names the errno:
//     "Connection refused — a firewall or proxy may be blocking it
//     (ECONNREFUSED)", "Can't reach the API server — check your internet or
//     DNS (EAI_AGAIN)", "Connection to the API was lost (ECONNRESET)";
//     2.1.197 said "Connection error.". Its own request timeout
//     (API_TIMEOUT_MS) reads "Request timed out" in 2.1.197 and "Request
//     timed out. If the API is slow to answer, … set API_TIMEOUT_MS above N."
//     in 2.1.332. A 403 is worded "Failed to authenticate. API Error: 403 …"
//     in both.
//   - The CLI retries API errors itself first (CLAUDE_CODE_MAX_RETRIES,
//     default 10; the real-CLI tests set 0 so failures reach drover in
//     seconds). drover sets no such variable unless the profile's env does.
//   - A plan usage window is a rate_limit_event {status: rejected, resetsAt}
//     only for a subscription (CLAUDE_CODE_OAUTH_TOKEN); with an API key the
//     same 429 is reported as a plain rate limit.
//   - In print mode AskUserQuestion is disabled: the model's tool_use comes
//     back as a user event whose tool_result has is_error true ("No such tool
//     available: AskUserQuestion. AskUserQuestion is disabled for this
//     session…" in 2.1.332, "… exists but is not enabled in this context" in
//     2.1.197), result.permission_denials stays empty and the run exits 0.
//     The parser keeps the denied call's input.questions[].question (with its
//     options) as Structured.Question: the run asked a human
//     (testdata/*ask_user_question). A QUESTION: line ending the result text
//     is read too (policy.QuestionLine).
//   - A 403 (permission_error) arrives as assistant.error
//     authentication_failed with api_error_status 403 (2.1.332 adds
//     api_error_type "permission_error"): the key's access, the same for
//     every card, so auth_failed.
//   - A server that never answers is waited on for 600 s unless
//     API_TIMEOUT_MS is set: drover's timeout or stall_timeout ends it.
//   - It calls POST /v1/messages?beta=true on ANTHROPIC_BASE_URL;
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 keeps it off other hosts.
//     A start costs a few CPU seconds, so many at once on a small machine
//     print nothing for a while.
package claude
