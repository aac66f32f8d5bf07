// Package gemini reads what Gemini CLI prints in headless mode with
// --output-format stream-json: one JSON event per line (init, message,
// tool_use, tool_result, error, result), and what it prints on stderr when
// a request fails. kind.go registers the kind, resume.go continues a
// session after a human's answer.
//
// What real runs taught (0.61.0: the captures in testdata, made by
// capture_test.go, and tests/realcli through drover serve against
// internal/testkit/fakeprovider's Gemini API):
//
//   - Headless means stdin is not a terminal (or -p): the prompt comes from
//     stdin. --skip-trust is needed in a folder never trusted (exit 55
//     otherwise); without --yolo the CLI leaves out the tools that edit
//     files and run commands.
//   - Exit codes: the failing HTTP status modulo 256 (429 exits 173, 403
//     147, 500 244, 503 247), or the CLI's own: 41 auth setup, 42 bad input
//     (an unknown --resume id), 52 config, 53 session turn limit, 55
//     untrusted folder, 1 anything else (a transport failure). A blocked
//     candidate (finishReason SAFETY) exits 0.
//   - A failed run still ends with a result event, status "error", and
//     error.message "[API Error: <the API's google.rpc error as JSON>]";
//     error.type is "unknown" for API errors. Two cases keep the status only
//     on stderr, in the error object Node prints ("status: 503"): a 429 or
//     503 the CLI calls a quota error ("[API Error: The service is currently
//     unavailable.]"), and the daily quota ("You have exhausted your daily
//     quota on this model.", class TerminalQuotaError). A stream cut
//     mid-way says only "[API Error: terminated]"; stderr names the errno
//     ("[cause]: Error: read ECONNRESET"). Refused and DNS failures print no
//     errno, only "exception TypeError: fetch failed sending request". So
//     the parser reads stderr too (FeedStderr): agent/command feeds it the
//     run's stderr after stdout, as drover classify does.
//   - Retries: 429, 499, 5xx and fetch failures are retried by the CLI, 10
//     attempts, 5 s doubling to 30 s (or the API's RetryInfo delay), each
//     printed on stderr ("Attempt N failed…"): minutes before drover sees
//     the failure. A 429 whose RetryInfo exceeds the CLI's limit, a per-day
//     QuotaFailure or ErrorInfo reasons such as
//     INSUFFICIENT_G1_CREDITS_BALANCE are terminal (not retried). The one
//     knob is the settings key general.maxAttempts (at most 10; no flag, no
//     variable); tests/realcli sets 1 in a run-private HOME. drover sets
//     none: it would have to write a settings file the operator owns.
//   - Without a model (-m, model.name in settings, GEMINI_MODEL) the CLI
//     first asks a router model (generateContent on a flash-lite model,
//     expecting JSON) which model to use, with retries of its own.
//   - GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type, which
//     headless mode refuses ("Invalid auth method selected.", exit 41);
//     security.auth.selectedType "gemini-api-key" in settings makes it use
//     GEMINI_API_KEY with the base URL. The URL must be https unless it is
//     localhost.
//   - Headless, the model is offered no ask_user tool: a question to the
//     human can only be the final text of a run that succeeds.
//   - Sessions: the init event's session_id is a UUID that --resume takes
//     (as well as "latest" or an index); sessions live per project folder
//     under the CLI's home (~/.gemini/tmp/<project>/chats), so the resumed
//     run needs the same workspace and HOME. The resumed run's first request
//     carries the whole earlier conversation, then the new prompt.
package gemini
