// Package opencode reads what `opencode run --format json` prints: one JSON
// event per line (step_start, text, reasoning, tool_use, step_finish,
// error), each with the session id. kind.go registers the kind, resume.go
// continues a session; testdata/README.md lists the captures.
//
// What real runs taught (opencode-ai 1.18.33: the captures in testdata, and
// tests/realcli against internal/testkit/fakeprovider's Chat Completions
// API, configured as a custom @ai-sdk/openai-compatible provider):
//
//   - The prompt is read from stdin when stdin is not a terminal. Every
//     event carries sessionID; step_start and step_finish bracket one model
//     call (step_finish.part: reason stop, tool-calls, length or
//     content-filter, tokens and cost), text and tool_use are emitted when
//     the part ends (a stalled stream prints nothing). There is no final
//     "done" event in 1.18.33.
//   - Exit codes: 0 when the session goes idle (also after a rejected
//     permission, below); 1 after an error event; 1 with one line on stderr
//     for bad usage ("Error: You must provide a message or a command",
//     "Error: Session not found" for an unknown --session, in ANSI colour).
//     An API failure prints nothing on stderr.
//   - A failure is one error event with a named error: APIError (data:
//     statusCode, isRetryable, responseHeaders, responseBody = the provider's
//     own error JSON), ContextOverflowError (context_length_exceeded),
//     ContentFilterError (finish_reason content_filter), ProviderAuthError,
//     MessageOutputLengthError, MessageAbortedError, UnknownError. This
//     parser reads the name, the status, the body's error code or type and
//     the retry-after header. An APIError with no status, body or headers is
//     a call that got no HTTP answer ("Cannot connect to API: …" for a
//     refused connection, a failed lookup and a reset stream alike):
//     APIError connection_failed, the network.
//   - Its own retries: a retryable failure (isRetryable, any 5xx, or a
//     message or body that matches its rate-limit, overload or transport
//     patterns — so a 429 insufficient_quota too) is retried up to five
//     times, 2 s doubling with up to 25% jitter and at most 30 s apart, or
//     exactly the provider's retry-after-ms / retry-after, with no upper
//     bound. Nothing is printed meanwhile, and 1.18.33 has no setting or
//     variable to change it: a 429 with retry-after N is silent for about
//     5·N seconds, so a profile's stall_timeout must be above that (the
//     real-CLI tests use 300 s for a 40 s retry-after), and a failing call
//     without retry-after reaches drover after about 60-80 s.
//   - `opencode run` denies its question tool (and plan_enter, plan_exit):
//     the model is not even offered it, so a question to the human arrives
//     as the final text of a run that exits 0.
//   - Every permission that asks ("ask" in the config's permission, e.g.
//     bash: ask) is rejected
//     ("permission requested: bash (…); auto-rejecting" on stderr); the tool
//     part fails with opencode's own "The user rejected permission to use
//     this specific tool call." and the run stops with exit 0 and no answer.
//     drover reads that as a denial (input_required, the tools in
//     DeniedTools, a question naming the tool and its input). `--auto`
//     approves what asks instead.
//   - Before the first turn opencode asks the model for a session title (a
//     request with no tools and a "title generator" system prompt, quoting
//     the prompt); a resumed session is titled already.
//   - `run --session <id>` continues a session (stored in SQLite under
//     $XDG_DATA_HOME/opencode, else ~/.local/share/opencode): the prompt is
//     the next user message, and the first request carries the whole
//     conversation before it (the earlier prompt, the assistant's tool calls,
//     their results).
//   - Configuration: the JSON in OPENCODE_CONFIG_CONTENT, the file
//     OPENCODE_CONFIG names, opencode.json in the working directory and
//     ~/.config/opencode/opencode.json, merged; "{env:NAME}" in a value is
//     the variable (empty when unset: the request then goes without a key).
//     It writes under ~/.config/opencode, ~/.cache/opencode and
//     ~/.local/share/opencode; OPENCODE_DISABLE_MODELS_FETCH=1 and
//     OPENCODE_DISABLE_AUTOUPDATE=1 keep it from fetching models.dev and
//     checking for updates.
//   - A start costs about 5 CPU seconds (a compiled Bun binary, ~180 MB).
package opencode
