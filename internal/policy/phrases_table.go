package policy

// Phrases is the built-in phrase table, tried in order after typed signals
// and after the structure in the text (an HTTP status, an error type, an
// errno: see structure.go); the first row that matches wins, so narrower rows
// come before broader ones. Rows are families of stems with word boundaries,
// not exact sentences, so that wording that moves between CLI versions still
// lands right; `unknown` is the answer when nothing matches.
var Phrases = []Phrase{
	// Stalls and timeouts, before the broader stream and connection rows.
	phrase("codex_idle_timeout", `(?i)idle timeout waiting for SSE`, KindStalled,
		"stream disconnected before completion: idle timeout waiting for SSE",
		"codex:stall_midstream"),
	phrase("request_timed_out", `(?i)\b(request|operation|api request) (has )?timed out\b|\btimed out waiting for (a )?response\b|\b(api|request) timeout\b|\brequest exceeded (the )?time limit\b|\btimeout waiting for\b`, KindTimeout,
		"API Error (Request timed out.) · Retrying in 8 seconds… (attempt 5/10)",
		"pc006", "pc170", "claude:hang_api_timeout", "hd066", "hd067", "hd084", "he061"),

	// A process ended from outside by SIGTERM or SIGKILL (exit status 143 =
	// 128 + 15, 137 = 128 + 9: a shutdown, a supervisor, a container stop,
	// the OOM killer): nothing the card did; the crash-loop cap bounds it.
	// A shell reports a job a signal ended with the signal's strsignal(3)
	// name after its pid ("line 69: 10 Killed", bash; "Killed: 9", macOS;
	// "zsh: killed"), and Windows' STATUS_CONTROL_C_EXIT (0xC000013A) is a
	// console's Ctrl+C or its window closed.
	phrase("terminated_by_signal", `(?i)\b(exited|exit(ed)? with|terminated with|killed with|failed with) (exit )?(code|status) 1(37|43)\b|\b(killed|terminated|stopped) by (signal )?(SIGTERM|SIGKILL|signal (9|15))\b|\breceived SIGTERM\b|\bline \d+: +\d+ (Killed|Terminated)\b|\b(Killed|Terminated): (9|15)\b|\b(exit(ed)?|exited with|failed with) (exit )?(code|status) (3221225786|-1073741510|0xC000013A)\b|\b(zsh|bash|sh): (killed|terminated)\b|\bkilled by the OOM killer\b|\bOOM[- ]?killed\b|\bOut of memory: Killed process\b`, KindInterrupted,
		"Error: Claude Code process exited with code 143",
		"hi024", "hj026", "hm060", "hn091"),

	// Plan usage windows, before quota and the generic rate-limit rows.
	phrase("claude_usage_limit_epoch", `(?i)Claude AI usage limit reached\|\d{9,11}`, KindUsageLimited,
		"Claude AI usage limit reached|1762952400",
		"pc012", "pc014"),
	// Credit gone, in words that cannot be a usage window: a balance that
	// affords less than the request (OpenRouter's credit check, whose
	// advice names "a key with a higher monthly limit", hence before the
	// usage row), an insufficient balance or credit, a budget spent.
	phrase("credits_gone", `(?i)\binsufficient[ _](balance|credits?|funds)\b|\brequires more credits\b|\bcan only afford\b|\b(out of|no) (api )?credits( left| remaining)?\b|\bcredits? (exhausted|depleted|used up|ran out)\b|\bpayment required\b|\b(account|balance) (is )?(in arrears|overdue)\b|\barrearage\b|\bbilling[ _](hard[ _])?limit\b|\bbudget (has been |is )?(exceeded|exhausted)\b|\b(exceeded|crossed|over) (the |its |your )?budget\b|\bspend(ing)? (limit|cap)\b|\bquota\b.{0,40}\bis not enough\b|\binsufficient[ _]user[ _]quota\b|额度不足|余额不足|额度已用尽|预扣费额度失败`, KindQuotaExhausted,
		"Error: This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 3919. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account",
		"pc231", "pc232", "pc233", "pc234", "pc235", "pc236", "ho014", "he028", "hf041", "hh086", "hj070", "hl087"),
	// A limit whose stated wait is long (an hour or more, or 1,000 seconds
	// and up: "Please try again in 15 hours 23 minutes", Claude Code's
	// "Retrying in 2892 seconds…") is a usage window, whatever it calls
	// itself: every card of the profile would wait it out alike. Read from
	// the number, before the rows that read a short wait as a rate limit.
	phrase("long_wait", `(?i)\b(try again|retry(ing)?|resets?|available again|wait)\s+(in|after)\s+(\d+\s*(hours?|hrs?|days?)\b|\d{4,}(\.\d+)?\s*(s|secs?|seconds)\b|([3-9]\d|\d{3,})\s*(min|mins|minutes)\b)`, KindUsageLimited,
		"Please try again in 15 hours 23 minutes.",
		"hl034", "hl085"),
	// A quota or capacity the provider says comes back within seconds is a
	// rate limit (Google's "You have exhausted your capacity on this model.
	// Your quota will reset after 53s."); before the usage row.
	phrase("quota_reset_seconds", `(?i)\b(quota|capacity|limit)\b.{0,80}\breset(s)?\s+(after|in)\s+\d+(\.\d+)?\s?(ms|s|secs?|seconds?)\b`, KindRateLimited,
		"You have exhausted your capacity on this model. Your quota will reset after 53s.",
		"hb089", "hb093"),
	// A server throttling requests for a while, in words that say it is no
	// usage window (Claude Code's "Server is temporarily limiting requests
	// (not your usage limit)"): before the usage row, which "usage limit"
	// would otherwise catch.
	phrase("server_throttle", `(?i)\b(temporarily|currently) (limiting|throttling) requests\b|\bnot (your|a|the) usage limit\b`, KindRateLimited,
		"API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
		"hd062"),
	// Google's quota ids name their window: a per-minute (or per-second)
	// quota is a rate limit, whatever the message around it says ("You
	// exceeded your current quota, please check your plan and billing
	// details" comes with either); before the usage and quota rows.
	phrase("quota_per_minute", `\bquotaId\W+\w*Per(Minute|Second)`, KindRateLimited,
		`"quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier",`,
		"hc030", "hc078"),
	// A count of tokens over a limit is the input's size, whatever window
	// the limit belongs to (Qwen Code's "Session token limit exceeded:
	// 32,531 tokens > 32,000 limit"): before the usage row.
	phrase("tokens_over_limit", `(?i)\btoken limit (exceeded|reached)\b|\bexceeded (the )?(model('s)? )?(max(imum)? )?token limit\b`, KindContextExhausted,
		"Session token limit exceeded: 32,531 tokens > 32,000 limit.",
		"hf052", "hg049"),
	phrase("usage_window", `(?i)\busage[ _]limits?\b|\b(credit|usage|plan|message|token)s? (limit|quota|allowance)s?\b.{0,40}\bresets? on ((Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,? )?((Jan|Febr)uary|March|April|May|June|July|August|(Sept|Nov|Dec)ember|October|(Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\.?) \d{1,2}\b|\byou['’]ve hit your (\w+ )?limit\b|\blimits? will reset\b|\b(session|weekly|daily|monthly)\b.{0,30}\b(limit|quota)\b|\blimit reached\b.{0,10}\bresets?\b|(?s:\b(quota|limit)\b.{0,100}\bper[ -]day\b)|\bfree (limit reached|usage (exceeded|limit))\b|\bout of (\w+ ){0,2}messages\b|\breset(s)?\s+(after|in)\s+\d+\s?h(ours?)?(\d|\b)|\bquotaId\W+\w*PerDay|\bfree (\w+ )?quota (exceeded|exhausted|reached|used up)\b|\b(TPD|RPD)\b|\b(tokens|requests) per day\b`, KindUsageLimited,
		"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:33 PM.",
		"pc015", "pc016", "pc017", "pc018", "pc151", "pc152", "pc216", "pc219", "codex:usage_limit", "claude:usage_limit_subscription", "hb009", "hb090", "he009", "he013", "he042", "hg043", "hg048", "hi067"),

	// Billing: credit and quota that an operator must top up. A quota the
	// provider says resets in seconds is a rate limit (Gemini's per-minute
	// free tier).
	phrase("quota_retry_seconds", `(?is)\bexceeded your current quota\b.*\b(please )?retry (in|after) \d+(\.\d+)?s\b`, KindRateLimited,
		"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 125000\nPlease retry in 15.002899939s.",
		"pc156", "gemini:rate_limit_429"),
	phrase("credit_balance_too_low", `(?i)\bcredit balance (is )?too low\b|\bcredit limit reached\b`, KindQuotaExhausted,
		"Credit balance is too low",
		"pc032", "pc033", "pc034", "pc035", "pc036", "claude:credit_balance_too_low"),
	phrase("quota_exceeded", `(?i)\binsufficient[ _]quota\b|\bexceeded your current quota\b|\bquota exceeded\b.{0,20}\b(plan|billing)\b|\bcheck your plan and billing\b|\bbilling details\b|\b(request|credit|token|spend(ing)?) budget (is |has been )?(exhausted|exceeded|used up)\b`, KindQuotaExhausted,
		"Quota exceeded. Check your plan and billing details.",
		"pc150", "pc157", "pc158", "pc160", "pc163", "pc237", "codex:insufficient_quota_sse"),

	// Input too large for the model.
	phrase("context_window", `(?i)\bprompt is too long\b|\bcontext[ _](window|length)\b|ContextWindowExceeded|\bmaximum context length\b|\bexceeds? (the )?(model's |available |maximum )?context (size|limit|window)\b|\bcontext exceeds (the )?model('s)? limit\b|\bcontext (low|limit reached)\b|\bconversation too long\b|\b(input|request|prompt) is too long\b|\blonger than the model's context length\b|\binput tokens exceed the configured limit\b|\bexceeds the maximum number of tokens\b|\bran out of room\b|\b(input|prompt|request) (length|size) \d+ exceeds (the )?max(imum)?\b|\bmax_tokens\b.{0,60}\bgot -\d+`, KindContextExhausted,
		"Prompt is too long · the request is ~215384 tokens (limit 200000) but this conversation is only ~1536 tokens",
		"pc093", "pc097", "pc098", "pc103", "pc201", "claude:prompt_too_long", "codex:context_length_exceeded", "ho019", "hc015", "hc021", "hd048", "he043", "he045", "hi044", "hi085"),

	// AWS's validation of a request body over its length cap (Bedrock's
	// InvokeModel "Value at 'body' failed to satisfy constraint: Member must
	// have length less than or equal to 25000000"): the input's size.
	phrase("request_body_length", `(?i)\bvalue at '(body|messages?|prompt|inputText|system)[^'\n]*' failed to satisfy constraint: member must have length less than or equal to \d+`, KindContextExhausted,
		"1 validation error detected: Value at 'body' failed to satisfy constraint: Member must have length less than or equal to 25000000",
		"hk092"),

	// The model's answer hit its output cap inside the run.
	phrase("claude_max_output_tokens", `(?i)response exceeded the \d+ output token maximum|\bresponse_truncated\b|\breason\W{1,3}MAX_TOKENS\b`, KindAgentFailed,
		"API Error: Claude's response exceeded the 64000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
		"pc094", "pc095", "claude:max_output_tokens", "he063"),

	// Configuration: the same for every card until an operator changes it.
	phrase("max_tokens_over_cap", `(?i)\bmax_tokens: \d+ > \d+`, KindConfigError,
		`API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-opus-4-6"}}`,
		"pc096"),
	phrase("model_missing", "(?is)\\bmodels?\\b.{0,80}?\\b(does not exist|doesn['’]t exist|not found|was not found|is not supported)\\b|\\bissue with the selected model\\b|\\brequested entity was not found\\b|\\binvalid model( name| id| identifier)?\\b|\\bnot a valid model( id)?\\b|\\bmodel identifier is invalid\\b|\\bINVALID_MODEL_ID\\b|\\bLLM Provider NOT provided\\b|\\b(model_not_found|not_found_error|ProviderInitError|ProviderModelNotFoundError)\\b", KindConfigError,
		"The model `gpt-nonexistent-9` does not exist or you do not have access to it.",
		"pc139", "pc188", "claude:model_not_found", "codex:model_not_found", "ho022", "he023", "he067", "he068", "he069", "he070"),
	// The provider the profile names is not configured or not known
	// ("Provider 'mm' not found", "Unknown provider"), and an agent
	// install missing a part it executes (codex's sandbox helper, its own
	// binary under bubblewrap) or refused by its own trust check on the
	// install path: the setup, the same for every card.
	phrase("provider_missing", `(?i)\bprovider\b\W{1,3}[\w./-]{1,40}\W{1,3}(not found|is not configured|does not exist|is unknown)\b|\bunknown (model )?provider\b|\bno (llm |model |ai )?providers? (is |are )?configured\b|\bconfigure (at least one|an?) (llm |model |ai )?provider\b`, KindConfigError,
		"Error: Provider 'mm' not found.",
		"hd031", "hj039"),
	phrase("agent_install", `\b\w*ExecutableNotProvided\b|\bexecvp \S+: No such file or directory\b|(?i)\btrust check failed\b|\bno sandbox (is )?available\b|\bsandbox (is )?(not available|unavailable|not supported) (on|in|for) this\b`, KindConfigError,
		"LandlockSandboxExecutableNotProvided",
		"hd020", "hd021", "hd065", "hh017"),
	// The sandbox, container or runtime the agent works in did not come up
	// (its image missing, its container exited, it did not start in time,
	// its command could not be found): the workspace, before any agent
	// work, retried under its own cap; the install itself missing a part
	// is the row above. Twelve gatherers of six batches labelled these
	// workspace_setup; they had come out config_error.
	phrase("sandbox_start", `(?i)\bsandbox (image|container|runtime)\b.{0,120}\b(is missing|not found|could not be (pulled|found|started))\b|\bsandbox\b.{0,40}\b(failed to (start|launch|determine|create|initiali[sz]e|build)|could not (start|be started|be created|be built)|cannot (be )?(build|start|create))\b|\b(failed to|cannot|could not|unable to) (start|launch|create|build|determine (the )?command for) (the |a )?sandbox\b|\bruntime initiali[sz]ation failed\b|\bcontainer \S+ (has )?exited\b|\b(runtime|container)\b.{0,80}\bfailed to start\b`, KindWorkspaceSetup,
		"500: Sandbox failed to start within 120s: oh-agent-server-XXXXXXX",
		"hi006", "hj023", "hj037", "hm035", "hm062"),
	// The configured model cannot call tools (an Ollama model without a
	// tool template, a provider's model without function calling): the
	// profile's model choice, the same for every card.
	phrase("model_without_tools", `(?i)\b(does not|doesn['’]t|do not) support (tools|tool use|tool calling|function calling|functions)\b|\b(tool use|tool calling|function calling|tools) (is |are )?not supported (by|for) (this|the) model\b`, KindConfigError,
		"400 codellama:latest does not support tools",
		"hc061", "hc062", "hc063"),
	// The CLI's argument parser refused its command line: an option or
	// argument it does not know (commander, clap, yargs, cobra, argparse),
	// or the usage it prints instead of running (yargs' Options: block with
	// -h, --help). The profile's args, the same for every card.
	phrase("cli_usage", `(?im)^error: unknown option\b|\bflag provided but not defined: -|^error: unexpected argument '|^unknown arguments?: |^(error: )?unknown (shorthand )?flag: |^error: unrecognized arguments?:|^error: invalid value '[^'\n]*' for '-|\binvalid (headless |cli |command[- ]line )?options?: |(^|\s)--[a-z][\w-]* (cannot|can't|may not) be (used|combined)( with| when| together| as| in| by)?\b|(?ms:^(?:Options|Flags):\s*$.*^\s+-h, --help\b)`, KindConfigError,
		"error: unknown option '--bogus-flag'",
		"claude:invalid_flag", "ho044", "codex:invalid_flag", "gemini:invalid_flag", "gemini:0.55.1-invalid_flag", "opencode:invalid_flag", "opencode:1.3.2-invalid_flag", "hc040", "hi019", "hm075"),
	// The workspace is not the repository the agent expects (git's own
	// "fatal: not a git repository", an agent's worktree step): the
	// workspace's setup (hooks, workspace.git), not the card.
	phrase("workspace_not_repo", `(?i)\bnot (in |inside )?a git repo(sitory)?\b`, KindWorkspaceSetup,
		"fatal: not a git repository (or any of the parent directories): .git",
		"hi029"),
	// The process cannot read its own working directory (Node's uv_cwd,
	// getcwd, a shell's "cannot access parent directories"): the workspace
	// was removed or is not readable under the agent, not the card's
	// content. Before the tool_permission row, whose EPERM it carries.
	phrase("workspace_cwd", `(?i)\buv_cwd\b|\bgetcwd\b.{0,60}\b(No such file|EPERM|EACCES|Permission denied|Operation not permitted|cannot access)\b|\bcannot access parent directories\b|\b(current )?working directory\b.{0,40}\b(no longer exists|does not exist|was (deleted|removed))\b`, KindWorkspaceSetup,
		"Error: EPERM: operation not permitted, uv_cwd",
		"hk029"),
	// An MCP server the profile configures does not come up, or the model
	// server needs a flag it was not started with: the setup's, the same
	// for every card.
	phrase("mcp_startup", `(?i)\bMCP (client|server)s?\b.{0,60}\b(timed out|failed to start|failed to initiali[sz]e|could not (start|be started))\b|\brequires --[a-z][\w-]*\b.{0,80}\bto be (set|enabled|passed)\b`, KindConfigError,
		"MCP server `docs` failed to start: spawn npx ENOENT",
		"hj025", "hj075"),
	// The agent refuses to start where it is started: inside another
	// session of itself (Claude Code's nested-session guard, set off by an
	// environment variable the parent left), or for a request that its SDK
	// will only send streaming: the launch's setup, the same for every card.
	phrase("launch_refused", `(?i)\bcannot be (launched|run|started) inside another\b|\bnested sessions?\b.{0,60}\b(not (allowed|supported)|share|crash)\b|\bstreaming is (strongly )?(recommended|required)\b|\b(only supports|requires) stream(ing)?( mode)?\b|\bstream(ing)? (must|has to) be (enabled|true|set)\b`, KindConfigError,
		"Error: Claude Code cannot be launched inside another Claude Code session.",
		"hk009", "hk077"),
	// The account or login needs a variable the profile does not set
	// (Gemini CLI's "This account requires setting the GOOGLE_CLOUD_PROJECT
	// env var"): the profile's environment, the same for every card; before
	// the credentials row, which "Failed to login" would otherwise catch.
	phrase("required_env", `(?i)\brequires setting (the )?[A-Z][A-Z0-9_]{2,} (env(ironment)? var(iable)?)\b|\b(set|define) the [A-Z][A-Z0-9_]{2,} (env(ironment)? var(iable)?) (first|to use)\b`, KindConfigError,
		"Failed to login. Message: This account requires setting the GOOGLE_CLOUD_PROJECT env var.",
		"hl022"),
	// The same in Chinese, as the CLIs' Chinese locales and the relays
	// print it ("检查此提供商配置时出错": an error checking this provider's
	// configuration; "配置错误": a configuration error).
	// The relays' "no channel available" (无可用渠道, 所有渠道均不可用): no
	// upstream can take the request now, the provider's side.
	phrase("provider_zh", `无可用渠道|渠道(均|都)不可用`, KindProviderUnavailable,
		"所有渠道均不可用：当前分组 default 下对于模型 gpt-3.5-turbo-16k 无可用渠道", "hn083"),
	phrase("config_zh", `检查(此|该|你的)?(提供商|模型|渠道)?配置(时)?出错|配置(有)?错误|配置(文件)?(无效|不正确|解析失败)|请(再次)?检查(你的|您的)?配置`, KindConfigError,
		"检查此提供商配置时出错。",
		"hl043"),
	phrase("untrusted_directory", `(?i)\bnot (inside|running in) a trusted (directory|folder|workspace)\b|\b(folder|directory|workspace) is (not trusted|untrusted)\b|\buntrusted (folder|directory|workspace)\b|--skip-git-repo-check was not specified\b`, KindConfigError,
		"Not inside a trusted directory and --skip-git-repo-check was not specified.",
		"pc238", "pc239", "pc240", "pc241"),
	// The agent's own configuration file does not load: a parse error, a
	// key of the wrong type, a file its validator refuses (codex's
	// config.toml, Gemini CLI's settings.json, opencode's opencode.json).
	phrase("config_file", `(?i)\b(error|failed to|unable to|could not|cannot) (load|loading|parse|parsing|read|reading)( the| your)? (config(uration)?|settings)( file)?\b|\binvalid configuration\b|\bconfiguration is invalid\b|\bconfig(uration)? file (at \S+ )?is invalid\b|\bTOML parse error\b|\bconfig\.toml:\d+:\d+\b|(?s:\b(settings|config|opencode)\.jsonc?\b.{0,300}\bis not valid JSON\b)|\bplease fix the configuration\b|\binvalid (settings|config)\b|\berror in \S*(settings|config)\.jsonc?\b|(?s:\b(settings|config|opencode)(\.local)?\.(jsonc?|toml|ya?ml)\b.{0,120}\b(trailing comma|unexpected (token|character|end of)|at line \d+,? column \d+|syntax error|parse error)\b)|(?ms:^\s*Settings Error\s*$.{0,200}\bsettings(\.local)?\.json\b)|\b(harness|plugin|extension|runtime)\b.{0,40}\bis not (registered|installed)\b`, KindConfigError,
		"failed to load configuration: /Users/xxx/.codex/config.toml:228:1: invalid type: map, expected a sequence.",
		"pc242", "pc243", "pc244", "pc245", "pc246", "pc247", "pc248", "pc249", "pc251", "hb046", "hb079", "hb081", "hd009", "hd054"),
	// The agent's own state or settings directory it may not write (a
	// home owned by root, a shared /tmp/claude another user made, a system
	// settings path): the machine's setup, not the card's sandbox; before
	// the tool_permission row.
	phrase("agent_state_denied", `(?i)\b(EACCES|EPERM|permission denied|operation not permitted)\b.{0,40}?\S*(/\.claude\b|/\.claude\.json\b|/\.gemini\b|/\.codex\b|/\.qwen\b|/\.openhands\b|/\.crush\b|/\.aider\b|/\.goose\b|/\.local/share/(opencode|crush|goose)\b|/\.config/(opencode|crush|goose)\b|/GeminiCli\b|/tmp/claude\b|/\.[\w-]+/(settings|config)(\.local)?\.(json|jsonc|toml|ya?ml)\b)`, KindConfigError,
		"EACCES: permission denied, mkdir '/Users/alexstyl/.local/share/opencode'",
		"he047", "he048", "he049", "he050", "hf053", "hf082"),
	phrase("claude_stream_json_needs_verbose", `(?i)--output-format=stream-json requires --verbose`, KindConfigError,
		"Error: When using --print, --output-format=stream-json requires --verbose",
		"claude:stream_json_without_verbose"),
	phrase("claude_empty_prompt", `(?i)input must be provided either through stdin or as a prompt argument`, KindInvalidInput,
		"Error: Input must be provided either through stdin or as a prompt argument when using --print",
		"claude:empty_prompt"),

	// Refusals.
	phrase("claude_usage_policy", `(?i)\bviolate\s+our\s+usage\s+policy\b|\bsafeguards? (flagged|blocked|triggered)\b|\bflagged (this|the|your) (message|request|content)\b|\b(seems|appears) to violate\b|\brefused (this|the|your) request\b|\bRefusal \(\w+\)`, KindRefused,
		"API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup). Try rephrasing the request in a new session or change your model.",
		"pc178", "pc179", "pc180", "pc181", "pc182", "claude:refusal", "hb083", "he056", "he057"),
	// A provider's content filter (Azure OpenAI's content management
	// policy) declined the prompt or its answer.
	phrase("content_filter", `(?i)\bcontent (management|moderation|filtering) polic(y|ies)\b|\b(response|prompt|output|completion) was filtered\b|\bfiltered due to the prompt\b|\b(stopped|blocked) due to (prohibited|unsafe|harmful) content\b|\b(may|might|could) contain (inappropriate|unsafe|harmful|sensitive|prohibited) content\b|\bDataInspectionFailed\b|\bContentPolicyViolation(Error)?\b|\bcontent[ _]policy[ _]violation\b|\b(considered|deemed|flagged as|classified as) (high[- ]risk|unsafe|harmful)\b`, KindRefused,
		"OpenAI error: The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
		"hc049", "hc051", "hd042", "hf051", "hg093", "hj044"),
	phrase("codex_cyber_policy", `(?i)flagged for possible cybersecurity risk`, KindRefused,
		"This request has been flagged for possible cybersecurity risk.",
		"codex:cyber_policy"),

	// Limits inside the run.
	phrase("claude_max_turns", `(?i)reached (the )?maximum number of turns|\brecursion limit of \d+ reached\b|\bGraphRecursionError\b|\bmax(imum)?[ _-]?(turns|iterations|requests|steps)\b (\(\d+\) )?(exceeded|reached)\b|\bMaxTurnsExceeded\b|\b(turn|iteration) limit (reached|exceeded)\b|\b(stopped|halted) due to (the )?(max(imum)? (iterations|turns)|(iteration|turn) limit)\b|\b(exceeded|reached) (the )?max(imum)? (turn|iteration)s? limit\b|\bonly \d+ (reflections|turns|iterations|steps|requests|retries) (are )?allowed\b`, KindMaxTurns,
		"Reached maximum number of turns (1)",
		"claude:max_turns", "hl068", "hc039", "hc041", "hc042", "hd089", "hd090", "hd091", "he080", "hi051", "hj045"),

	// A tool or sandbox denial inside the agent: this card's permissions,
	// not the key (kept before the account row, so a 403 that says it was a
	// file or a sandbox stays the card's).
	phrase("tool_permission", `(?i)\bpermission denied \(os error 13\)|\bmust be within (one of )?the (workspace|allowed|project) director(y|ies)\b|\bEACCES\b|\boperation not permitted\b|\bsandbox (denied|denial|blocked|prevented)\b|\b(blocked|denied) by (the )?sandbox\b|\brejected by (the )?(user|sandbox|approval policy)\b|\b(error running )?landlock\b|\bsandbox is blocking\b|\bretry without (the )?sandbox\b|\brequested permissions? to (use|edit|write|read|run|execute)\b|\bhaven['’]?t granted it yet\b|(\b|_)(tool|command|tool call)\b.{0,60}\b(denied|blocked|rejected) by (the )?policy\b|\bapproval required by policy\b|\bAskForApproval is set to Never\b|\b(windows |linux |fs )?sandbox( helper)? failed\b|\bauto-denied\b|\b(headless|non-interactive) mode cannot prompt\b|(?m:^bwrap: .*\b(permission denied|operation not permitted)\b)|\bnot (in|on) the allow(ed)?[ -]?(commands? |tools? )?list\b`, KindPermissionDenied,
		"  └ /opt/homebrew/Library/Homebrew/cmd/shellenv.sh: line 18: /bin/ps: Operation not permitted", "ho045", "pc254", "pc255", "hc087", "hc088", "hc089", "hd019", "hd059", "he026", "he082", "he083"),

	// The account, organisation or key was disabled, suspended or revoked:
	// every card of the profile fails alike until a human acts (Anthropic
	// answers a disabled organisation with a 400 invalid_request_error).
	phrase("account_disabled", `(?i)\b(organi[sz]ation|account|workspace|project|api key|key|subscription)\b[^.\n]{0,20}?\b(has been|is|was|got)( been)? (disabled|suspended|deactivated|banned|revoked|terminated)\b|\bhas disabled\b[^.\n]{0,60}\baccess\b`, KindAuthFailed,
		"API Error: 400 This organization has been disabled.",
		"hb067", "hb068", "hb069"),
	// The key or account may not use this API (HTTP 403): every card of the
	// profile fails alike, so it pauses the profile. Before the credentials
	// row ("Failed to authenticate. API Error: 403").
	phrase("account_forbidden", `(?i)\bnot authorized to use this\b|\b(token|key|account)\b.{0,10}\bnot (allowed|permitted|authorized) to (access|use)\b|\bonly accepts requests from\b|\bcan only be used from within\b|\b(tier|key|token|plan|subscription|account)\b.{0,20}\bcan only be used (in|from|with)\b|\b(key|account|organi[sz]ation|token|project) does not have (permission|access)\b|\bFailed to authenticate\. API Error: 403\b|\bunexpected status 403\b|\b(country|region|territory|location)\b.{0,30}\bnot supported\b|\bunsupported_country_region_territory\b|\b403 Forbidden\b|\b(organi[sz]ation|account) (must be|is not|needs to be) verified\b`, KindAuthFailed,
		"Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.",
		"pc076", "pc171", "pc172", "claude:permission_403", "codex:permission_403", "hb050", "hf076", "hk024", "hl042"),

	// Credentials: missing, wrong or expired. A missing key variable is the
	// credential the CLI did not get (drover passes only the variables a kind
	// documents plus env_passthrough).
	phrase("credentials", `(?i)\btoken (has |is )?(been )?expired\b|\binvalid (oidc|oauth|id|access|bearer|auth(entication)?|api) token\b|\bno refresh token\b|\binvalid (x-)?api[ -]key\b|\bapi[ -]key (is )?(invalid|not valid|expired|revoked)\b|\bapi key not (valid|found)\b|\bincorrect api key\b|\bmissing (\w+ )?api key\b|\bmissing environment variable\b|\bcould not resolve authentication method\b|\bnot logged in\b|\binvalid authentication credentials\b|\bmissing bearer\b|\bauthentication (did not complete|failed)\b|\brequire(s)? authentication\b|\bfailed to authenticate\b|\bunauthorized\b|\bcould not be refreshed\b|\bfailed to refresh (the |your )?token\b|\b(sign|log) in again\b|\b(not able|unable|could not|couldn['’]t) to authenticate\b|\bcredentials? (are |is )?(not valid|invalid|expired|missing|not found)\b|\b[A-Z][A-Z0-9_]*_(API_KEY|TOKEN)\b.{0,40}\b(not found|not set|is missing|is required|must be set)\b|\bmust specify (the )?[A-Z][A-Z0-9_]*_(API_KEY|TOKEN)\b|\bset an auth(entication)? method\b|\bcould not find\b.{0,40}\b(oauth|credentials?)\b|\breauthenticat(e|ion) is (needed|required)\b|\bopening (the )?(authentication|login) page in your browser\b|\bspawn xdg-open\b|\bno api key (available|found|provided|configured|set)\b|\bfailed to get auth(entication)? headers\b|\bexpected oauth ?2? access token\b|\bapi keys are not supported by this api\b|\binvalid (\w+ ){1,2}api[ -]?key\b|\bno (active )?credentials (for|found|available|configured)\b|\bfailed to (log ?in|sign ?in)\b|\b(login|sign-?in) failed\b|\bre-?authenticate with\b`, KindAuthFailed,
		"Invalid API key · Fix external API key",
		"pc020", "pc022", "pc027", "pc037", "pc039", "pc106", "pc141", "pc195", "pc205", "pc209", "pc211", "pc214", "claude:auth_401", "claude:missing_api_key", "codex:auth_401", "codex:builtin_provider_missing_api_key", "ho018", "ho037", "hb004", "hb052", "hb054", "hb055", "hb056", "hb057", "hb058", "hc014", "hc070", "hd023", "hd081", "he030", "he032", "he040", "hj029"),

	// A program the agent starts is not installed (Node's "spawn node
	// ENOENT"): the machine's setup, the same for every card; after the
	// credentials row, whose browser login ("spawn xdg-open ENOENT") is the
	// missing credential's.
	phrase("spawn_missing", `\bspawn \S+ ENOENT\b|\bposix_spawn '[^'\n]+'|(?s:\$\{[A-Za-z_]\w*\}.{0,200}\bENOENT\b|\bENOENT\b.{0,200}\$\{[A-Za-z_]\w*\})`, KindConfigError,
		"Failed to spawn Claude Code process: spawn node ENOENT",
		"hg028", "hh009", "hh043"),

	// Rate limits: wait and retry, the card's budget untouched.
	// curl's own exit codes, as "curl: (N)" or "exit_code=N" beside curl
	// (its man page, EXIT CODES): 5, 6 could not resolve, 7 could not
	// connect, 35 the TLS handshake failed, 52 empty reply, 55/56 send or
	// receive failed: the network; 28 its timeout (the network's when it
	// never connected); 60 and 77 a certificate
	// it will not trust, the setup's.
	phrase("curl_network", `\bcurl: \((5|6|7|35|52|55|56)\)|\bcurl: \(28\) (Failed to connect|Connection timed out)\b|\bcurl error exit_code=(5|6|7|35|52|55|56)\b`, KindNetwork,
		`curl: (35) error:0A000126:SSL routines::unexpected eof while reading`, "hn046"),
	phrase("curl_timeout", `\bcurl: \(28\)|\bcurl error exit_code=28\b`, KindTimeout,
		`curl: (28) SSL connection timeout`),
	phrase("curl_certificate", `\bcurl: \((60|77)\)|\bcurl error exit_code=(60|77)\b`, KindConfigError,
		`curl: (60) SSL certificate problem: unable to get local issuer certificate`),
	// Windows' NTSTATUS codes as a process's exit code (0xC0000005 an
	// access violation, 0xC0000139 an entry point not found, printed as
	// 3221225477…, or negative): the program crashed.
	phrase("windows_crash", `(?i)\b(exit(ed)?|exited with|failed with|returned) (exit )?(code|status)( of)? (3221\d{6}|-1073\d{6}|0xC0000\w{3})\b`, KindAgentFailed,
		`CLI process exited with code 3221225785 before server started`, "hn035"),
	// A client sends a parameter the model does not take ("Unsupported
	// parameter: 'max_tokens' is not supported with this model"): the
	// profile's client or its model, the same for every card. Before
	// bad_request.
	phrase("unsupported_parameter", `(?i)\bunsupported (parameter|value)\b.{0,120}\b(is not supported with this model|not supported by this model|use '?[\w.-]+'? instead)\b`, KindConfigError,
		`Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.`, "hn077"),
	phrase("rate_limit", `(?i)\brate[ _-]?limit(s|ed)?\b|\bexhausted your capacity\b|\btoo many (requests|tokens)\b|\bconcurrency limit\b|\bresource (has been )?exhausted\b|\brequest rejected \(429\)|\b429 status code\b|(?s:\b(quota|limit)\b.{0,100}\bper minute\b)`, KindRateLimited,
		"API Error: Request rejected (429) · This request would exceed the rate limit for your organization (1f3e2a4b-0000-4000-8000-fakefakefake) of 30,000 input tokens per minute.",
		"pc013", "pc048", "pc109", "pc110", "pc130", "pc135", "claude:rate_limit_429", "codex:builtin_provider_rate_limit", "ho002", "ho009", "ho010", "hc003", "he084"),

	// Network: the request never got an answer from a server. The fix is on
	// the operator's side (proxy, DNS, firewall), not the provider's.
	phrase("transport", `(?i)\bfetch failed\b|\bfailed to fetch\b|\b(API Error|TypeError): terminated\b|\bwas there a typo in the url or port\b|\bconnection error\b|\berror sending request\b|\bwaiting for network\b|\b(unable|failed|cannot|can['’]t|could not|couldn['’]t) (to )?connect\b|\bcould not resolve host\b|\bsocket (connection was closed|hang up)\b|\bgetaddrinfo\b|\bconnection (refused|reset)\b|\bconnection to the API was lost\b|\bno such host\b|\bfailed to lookup address information\b|\bname or service not known\b|\btemporary failure in name resolution\b|\bTLS handshake timeout\b|\bi/o timeout\b|\b(network|transport) error\b|"\S*": EOF\b|\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|EPIPE|UND_ERR_[A-Z_]+|ConnectionRefused|FailedToOpenSocket)\b`, KindNetwork,
		"wget: unable to resolve host address: could not resolve host api.example.com",
		"pc060", "pc062", "pc064", "pc068", "pc079", "pc083", "pc167", "pc208", "claude:dns_failure", "hb029", "hd040", "claude:2.0.77-reset_midstream", "opencode:1.3.2-dns_failure", "opencode:1.3.2-text_connection_refused", "he016"),

	// Provider trouble: overload, capacity, 5xx wording, streams the server cut.
	phrase("provider_trouble", `(?i)\boverloaded\b|\bupstream connect error\b|\bdisconnect/reset before headers\b|\bat capacity\b|\bhigh demand\b|\bserver[- ]side issue\b|\binternal server error\b|\bserver error\b|\bservice unavailable\b|\btemporarily unavailable\b|\bbad gateway\b|\bgateway timeout\b|\btry your request again\b|\bstream disconnected before completion\b|\bstream closed before\b|\bunexpected EOF\b|\bprovider returned error\b|\ban error occurred while processing your request\b|\bno (healthy )?(models|deployments|upstreams) available\b|\bno capacity available\b|\bdid not (provide|return) any (assistant )?(messages?|content|output|response)\b|\b(returned|got|received) (an )?empty (response|completion|body)\b`, KindProviderUnavailable,
		"API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment.",
		"pc001", "pc003", "pc009", "pc042", "pc044", "pc121", "pc183", "pc186", "claude:overloaded_529", "ho042", "hb066", "hb091"),

	// The conversation the agent sent breaks the API's own rules for tool
	// calls (a tool call with no result after it, a result with no call):
	// the agent's bookkeeping, not the card's input; another attempt, a new
	// session, may well not hit it. Before the bad_request row.
	phrase("tool_sequence", `(?i)\bmust be followed by tool messages\b|\bmessages with role\W{1,3}tool\W{1,3} must be a response to a prec?ee?ding\b|\btool_use\W{0,3} ids? (were|was) found without\W{0,3}tool_result\b|\btool_result\W{0,3} blocks?\b.{0,60}\b(must have a corresponding|without a (corresponding|matching))\W{0,3}tool_use\b|\bunexpected\W{0,3}tool_use_id\b|\bnumber of function response parts\b.{0,40}\bequal to the number of function call parts\b|\bwas provided without its required\b.{0,30}\bitem\b|\bno tool output found for (function|tool|custom tool) call\b`, KindAgentFailed,
		"an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'",
		"hk039", "hk069", "hl069", "he077", "hf037", "hg007", "hg042", "hh079", "hh091", "hm010"),

	// A request the API rejected as malformed: the card's input, not the setup.
	phrase("bad_request", `(?i)\binvalid_request_error\b|\bINVALID_ARGUMENT\b|\bbad request\b|\brequest contains an invalid argument\b|\bno tool call found\b`, KindInvalidInput,
		`Error from provider (Console): Upstream request failed: [invalid_request_error] reasoning `+"`encrypted_content`"+` was not issued to this caller`,
		"pc066", "pc075", "pc117", "pc119"),
}
