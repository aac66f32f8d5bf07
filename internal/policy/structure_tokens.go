package policy

import "regexp"

// token is one structural token found in a text: the family it names, how
// it was read (type: an API error type or code, a gRPC status name or a
// library's error class; errno: an errno), the token itself and where it
// stands.
type token struct {
	fam  family
	by   string
	word string
	at   int
}

// tokenRow is one row of a token table: a regexp whose first group (or
// whole match) is the token, and the family it names.
type tokenRow struct {
	re  *regexp.Regexp
	fam family
}

// words makes a row matching any of the |-separated words whole.
func words(ws string, fam family) tokenRow {
	return tokenRow{regexp.MustCompile(`\b(` + ws + `)\b`), fam}
}

// shaped makes a row from a regexp of its own, for tokens that are tokens
// only in a shape (a gRPC code in "code = Unavailable", a class after its
// module's name).
func shaped(re string, fam family) tokenRow {
	return tokenRow{regexp.MustCompile(re), fam}
}

// typeRows are error types and codes as the APIs spell them, the gRPC and
// google.rpc status names, and the error classes of the client libraries
// agent CLIs are built on. Earliest in the text wins.
var typeRows = []tokenRow{
	// API error types and codes (Anthropic, OpenAI, Google, OpenRouter,
	// the proxies in front of them).
	words(`usage_limit_reached|FreeUsageLimitError`, famUsage),
	words(`insufficient_quota|billing_error|insufficient_credits|insufficient_balance|exceeded_current_quota_error|billing_not_active|BudgetExceededError|InsufficientBalanceError|Arrearage`, famPayment),
	words(`context_length_exceeded|ContextWindowExceededError|ContextOverflowError|exceed_context_size_error`, famTooLarge),
	words(`rate_limit_error|rate_limit_exceeded|provider_rate_limit_exceeded|rateLimitExceeded|RATE_LIMIT_EXCEEDED|RESOURCE_EXHAUSTED|RateLimitError|TerminalQuotaError|RetryableQuotaError`, famTooMany),
	words(`authentication_error|invalid_api_key|invalid_grant|invalid_client|unauthorized_client|invalid_token|UNAUTHENTICATED|API_KEY_INVALID|ACCESS_TOKEN_TYPE_UNSUPPORTED|AuthenticationError|ProviderAuthError|FatalAuthenticationError`, famUnauthorized),
	words(`permission_error|PERMISSION_DENIED|client_validation_error|PermissionDeniedError|unsupported_country_region_territory`, famForbidden),
	words(`not_found_error|model_not_found|NotFoundError|ProviderInitError|ProviderModelNotFoundError|ModelNotFoundError|NOT_FOUND`, famNotFound),
	words(`overloaded_error|server_is_overloaded|api_error|UNAVAILABLE|stream_read_error|internalServerException|InternalServerError|ServiceUnavailableError|BadGatewayError`, famServer),
	words(`invalid_request_error|INVALID_ARGUMENT|FAILED_PRECONDITION|BadRequestError|UnprocessableEntityError|invalid_value`, famBadRequest),
	words(`content_policy_violation|content_filter|ContentPolicyViolationError|ContentFilterError|ResponsibleAIPolicyViolation`, famRefusal),
	// Gemini's safety verdicts: the finish and block reasons as the API
	// spells them, and as the Go and Python clients print their enums.
	words(`PROHIBITED_CONTENT|FinishReasonSafety|FinishReasonProhibitedContent|FinishReasonBlocklist`, famRefusal),
	shaped(`\bBlockedReason\.(\w+)|(?i)\b(?:finish|block)_?reason\W{1,4}(SAFETY|RECITATION|BLOCKLIST|SPII)\b`, famRefusal),
	// The AWS SDK's exception names (Bedrock behind litellm, Roo Code,
	// Positron), in the casing of the SDK and of the event stream headers.
	words(`ThrottlingException|throttlingException|TooManyRequestsException|ServiceQuotaExceededException`, famTooMany),
	words(`UnrecognizedClientException|ExpiredTokenException|InvalidSignatureException|IncompleteSignatureException`, famUnauthorized),
	words(`AccessDeniedException|accessDeniedException`, famForbidden),
	words(`ServiceUnavailableException|serviceUnavailableException|ModelNotReadyException`, famServer),
	words(`ModelTimeoutException`, famDeadline),
	// A base URL the HTTP client cannot use: Go's net/http, Node's URL
	// parser, Python requests. The profile's setup, for every card.
	shaped(`\b(unsupported protocol scheme)\b|\b(ERR_INVALID_URL)\b|\b(MissingSchema|InvalidSchema|InvalidURL)\b|\b(No connection adapters were found)\b|\b(fetch\(\) URL is invalid)|\b(TypeError: Invalid URL)\b`, famConfig),
	words(`ConfigInvalidError|ConfigJsonError|ConfigDirectoryTypoError|FatalConfigError|FatalUntrustedWorkspaceError|UnsupportedParamsError`, famConfig),

	// gRPC status codes as Go's grpc prints them ("rpc error: code =
	// Unavailable desc = …") and Python's (StatusCode.UNAVAILABLE), and the
	// google.rpc names in a JSON error's "status".
	shaped(`\bcode = (Unauthenticated)\b|\bStatusCode\.(UNAUTHENTICATED)\b`, famUnauthorized),
	// An error object's type field naming a 403 (Anthropic's "forbidden").
	shaped(`(?i)\btype\W{0,4}(forbidden)\b`, famForbidden),
	shaped(`\bcode = (PermissionDenied)\b|\bStatusCode\.(PERMISSION_DENIED)\b`, famForbidden),
	shaped(`\bcode = (ResourceExhausted)\b|\bStatusCode\.(RESOURCE_EXHAUSTED)\b`, famTooMany),
	shaped(`\bcode = (NotFound)\b|\bStatusCode\.(NOT_FOUND)\b`, famNotFound),
	shaped(`\bcode = (InvalidArgument|FailedPrecondition)\b|\bStatusCode\.(INVALID_ARGUMENT|FAILED_PRECONDITION)\b`, famBadRequest),
	shaped(`\bcode = (Unavailable|Internal)\b|\bStatusCode\.(UNAVAILABLE|INTERNAL)\b|"status"\s*:\s*"(INTERNAL)"`, famServer),
	shaped(`\bcode = (DeadlineExceeded)\b|\bStatusCode\.(DEADLINE_EXCEEDED)\b|\b(DEADLINE_EXCEEDED)\b`, famDeadline),
	// gRPC status codes by number, as gRPC core's debug strings and the
	// grpc-status trailer carry them ("grpc_status:7", "grpc-status: 14"):
	// 16 UNAUTHENTICATED, 7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 5
	// NOT_FOUND, 3 INVALID_ARGUMENT and 9 FAILED_PRECONDITION, 14
	// UNAVAILABLE and 13 INTERNAL, 4 DEADLINE_EXCEEDED.
	shaped(`\bgrpc[_-]status\W{1,3}(16)\b`, famUnauthorized),
	shaped(`\bgrpc[_-]status\W{1,3}(7)\b`, famForbidden),
	shaped(`\bgrpc[_-]status\W{1,3}(8)\b`, famTooMany),
	shaped(`\bgrpc[_-]status\W{1,3}(5)\b`, famNotFound),
	shaped(`\bgrpc[_-]status\W{1,3}(3|9)\b`, famBadRequest),
	shaped(`\bgrpc[_-]status\W{1,3}(14|13)\b`, famServer),
	shaped(`\bgrpc[_-]status\W{1,3}(4)\b`, famDeadline),

	// Client libraries' error classes. Python: httpx/httpcore, requests
	// and urllib3, aiohttp, the openai and anthropic SDKs (their
	// APITimeoutError), litellm's Timeout. Node: undici's timeout errors.
	// Go: net/http's client deadline. The connect-phase ones are network;
	// a request that got no answer in time is a timeout.
	shaped(`\b(?:httpx|httpcore)\.(ConnectError|ConnectTimeout|RemoteProtocolError|ReadError|NetworkError|ProxyError)\b`, famNetwork),
	shaped(`\b(?:httpx|httpcore)\.(ReadTimeout|WriteTimeout|PoolTimeout|TimeoutException)\b`, famDeadline),
	words(`NewConnectionError|MaxRetryError|ClientConnectorError|ServerDisconnectedError|ClientConnectionError|ConnectTimeoutError|SocketError|ConnectionRefusedError|ConnectionResetError|ConnectionAbortedError`, famNetwork),
	// httpx's timeout classes printed without their module ("ReadTimeout:
	// Connection failed after 3 attempts").
	shaped(`\b(ReadTimeout|WriteTimeout|PoolTimeout):`, famDeadline),
	words(`TimeoutError|APITimeoutError|ReadTimeoutError|HeadersTimeoutError|BodyTimeoutError|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT`, famDeadline),
	shaped(`\blitellm\.(Timeout)\b|(?i)\b((?:context )?deadline (?:exceeded|reached))\b|\b(Client\.Timeout exceeded)\b`, famDeadline),
}

// wrapperRows are classes that wrap another failure rather than name one:
// the SDKs' APIConnectionError says no answer came (openai, anthropic), and
// litellm's also wraps answers it could not map (a Bedrock 5xx, its own
// Timeout). A wrapper decides only when the text names nothing more
// specific after it; earlier rows win a tie, so litellm's comes first.
var wrapperRows = []tokenRow{
	shaped(`\blitellm\.(APIConnectionError)\b`, famServer),
	words(`APIConnectionError`, famConnection),
}

// textToken returns the earliest type token in text, or else the earliest
// errno, or else the earliest wrapper class.
func textToken(text string) (token, bool) {
	if t, ok := earliest(text, typeRows, "type"); ok {
		return t, true
	}
	if t, ok := earliest(text, errnoRows, "errno"); ok {
		return t, true
	}
	return earliest(text, wrapperRows, "type")
}

func earliest(text string, rows []tokenRow, by string) (token, bool) {
	best := token{at: -1}
	for _, r := range rows {
		m := r.re.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		lo, hi := m[0], m[1]
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				lo, hi = m[g], m[g+1]
				break
			}
		}
		if best.at < 0 || lo < best.at {
			best = token{fam: r.fam, by: by, word: text[lo:hi], at: lo}
		}
	}
	return best, best.at >= 0
}
