// Package codex reads what `codex exec` prints: JSONL events on stdout with
// --json, or plain text (the final message on stdout, everything else on
// stderr) without it. kind.go registers the kind.
//
// What real runs taught (0.171.0 from /work/shared/agent-output and under
// tests/realcli against internal/testkit/fakeprovider):
//
//   - A failed turn exits 1 (an `error` event, then `turn.failed`); bad
//     usage exits 2. Events carry message text only: no status, no kind.
//   - Most HTTP errors read "unexpected status 403 Forbidden: <the API's
//     message>, url: …, request id: …", and the status is taken from there.
//     Some are replaced by fixed texts of codex's own, which drop status and
//     message: a 500 is "We’re currently experiencing high demand, which may
//     cause temporary errors." (curly apostrophe) and an overloaded 503
//     (server_is_overloaded) is "Selected model is at capacity. Please try a
//     different model."; cannedStatus gives those their status back. A plan
//     usage limit reads "You’ve hit your usage limit. … try again at 9:33 PM."
//   - A provider whose env_key variable is unset fails at once with
//     "Missing environment variable: `NAME`." (exit 1).
//   - Connection refused and DNS failures are retried forever as
//     "Reconnecting... waiting for network (Connection failed: error sending
//     request)", even with request_max_retries = 0, and a server that sends
//     no headers is waited on forever: only drover's timeouts end those runs.
//     A connection reset mid-stream reads "stream disconnected before
//     completion: Transport error: network error: error decoding response
//     body".
//   - A refusal content part is dropped without a trace: exec --json prints
//     turn.started, then turn.completed with output_tokens > 0 and no
//     agent_message, and exits 0; the session rollout
//     ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl) ends with
//     task_complete, last_agent_message null, and holds neither the refusal
//     text nor a refusal item; logs_2.sqlite has nothing either. With no
//     structural sign of a refusal, such a run is unknown (NoFinalMessage),
//     not refused and not a success. An unknown model name adds a non-fatal
//     item of type error ("Model metadata for `x` not found…").
//   - codex exec cannot ask a human: a question is its final agent_message.
//     drover reads it by the QUESTION: line protocol (policy.QuestionLine,
//     asked for by the default prompt); a question in prose is a success.
//   - A 403 reads "unexpected status 403 Forbidden: Country, region, or
//     territory not supported…": the account's access, auth_failed.
//   - It is pointed at another endpoint by a provider in
//     $CODEX_HOME/config.toml (model_provider, [model_providers.NAME] with
//     base_url, env_key, wire_api = "responses", request_max_retries,
//     stream_max_retries, stream_idle_timeout_ms) and calls POST
//     /v1/responses with "stream": true.
package codex
