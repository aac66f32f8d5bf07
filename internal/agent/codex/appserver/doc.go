// Package appserver runs a codex profile in app-server mode: drover starts
// `codex app-server` (the protocol Symphony speaks) in the card's workspace
// and holds one JSON-RPC conversation with it over stdio, instead of
// reading `codex exec --json`. agent.go runs the process (agent/proc, with
// stdin as a pipe), session.go holds the conversation, requests.go answers
// the server's requests, tools.go offers drover's operations as dynamic
// tools, state.go turns notifications into policy.Structured.
//
// What codex-cli 0.171.0 taught (`codex app-server generate-json-schema`
// and `generate-ts`, with --experimental for the experimental parts; runs
// against internal/testkit/fakeprovider; shapes only, no code, from the
// openai/codex repository):
//
//   - Framing: one JSON object a line each way; messages carry no
//     "jsonrpc" field and the server accepts ours without it. Request ids
//     are numbers or strings (the server's own start at 0). Closing stdin
//     ends the server at once with status 0.
//   - The client sends initialize {clientInfo{name,title,version},
//     capabilities{experimentalApi, optOutNotificationMethods}} (answer:
//     userAgent, codexHome, platformFamily, platformOs), then the
//     notification initialized. experimentalApi opts into the
//     experimental fields drover uses: thread/start's dynamicTools and the
//     item/tool/requestUserInput request.
//   - thread/start {cwd, approvalPolicy, sandbox, config, dynamicTools}
//     answers {thread{id, …}, …}; the thread id is also the provider's
//     session: requests carry it as the Session-Id and Thread-Id headers
//     and prompt_cache_key. thread/resume {threadId, cwd, approvalPolicy,
//     sandbox, excludeTurns} continues a thread another process started
//     (threads persist under $CODEX_HOME/sessions unless ephemeral), with
//     its dynamic tools, and first re-reports the thread's token total
//     under an old turn id. approvalPolicy is "untrusted", "on-request",
//     "never" or {granular:{…}}; sandbox "read-only", "workspace-write" or
//     "danger-full-access".
//   - turn/start {threadId, input:[{type:"text", text, text_elements:[]}],
//     sandboxPolicy} answers {turn{id, status:"inProgress"}}; then
//     turn/started, item/started and item/completed (items typed
//     userMessage, agentMessage{text}, commandExecution{command}, …),
//     thread/tokenUsage/updated {turnId, tokenUsage{total, last}} (thread
//     totals; inputTokens includes cachedInputTokens),
//     account/rateLimits/updated {rateLimits{primary, secondary
//     {usedPercent, resetsAt}, rateLimitReachedType}}, and
//     turn/completed {turn{id, status: completed|interrupted|failed,
//     error}}. turn/interrupt {threadId, turnId} ends the turn
//     "interrupted".
//   - A failure is an error notification {error{message, codexErrorInfo},
//     willRetry} and then turn/completed with status failed and the same
//     error. codexErrorInfo is a string (contextWindowExceeded,
//     usageLimitExceeded, rateLimitExceeded, serverOverloaded,
//     internalServerError, unauthorized, modelNotFound, cyberPolicy, …,
//     other) or an object with one key carrying httpStatusCode
//     (httpConnectionFailed, responseStreamConnectionFailed,
//     responseStreamDisconnected, responseTooManyFailedAttempts). Against
//     the fake provider a 401 and a 503 came as httpConnectionFailed with
//     the status, a 429 as responseTooManyFailedAttempts, and an
//     insufficient_quota 429 as usageLimitExceeded with "Quota exceeded.
//     Check your plan and billing details." (so usageLimitExceeded alone
//     does not tell a plan's window from spent credit: the phrase table
//     does); the messages are exec mode's ("unexpected status 401
//     Unauthorized: …"), so codexerr reads a status the info leaves out.
//   - Server requests: item/commandExecution/requestApproval {command,
//     cwd, reason, availableDecisions} and item/fileChange/requestApproval
//     answer {decision: accept|acceptForSession|decline|cancel}; the v1
//     execCommandApproval and applyPatchApproval answer a ReviewDecision;
//     item/permissions/requestApproval answers {permissions, scope};
//     mcpServer/elicitation/request answers {action, content, _meta};
//     item/tool/call {tool, arguments, callId} answers {contentItems:
//     [{type:"inputText", text}], success}; item/tool/requestUserInput
//     {questions[{id, header, question, options[{label, description}]}]}
//     answers {answers{id:{answers[]}}}, and interrupting the turn
//     resolves it instead. The model has the request_user_input tool in
//     default mode only with the feature default_mode_request_user_input
//     (under development in 0.171.0; drover turns it on in thread/start's
//     config).
//
// What drover does with it is in docs/reference/agent-codex.md: one thread a
// run (resumed after a human's answer), continuation turns while the card
// stays in its running column (agent.Invocation.Continue) up to
// dispatch.max_turns, approvals per approval_policy (Approves), a
// question parks the card, tokens and rate limits feed the classifier.
// Not done yet: Symphony's linear_graphql tool, and drover_block,
// drover_comment and drover_progress as dynamic tools (they write to the
// store through drover's MCP server).
package appserver
