package policy

import (
	"regexp"
	"strconv"
	"strings"
)

// An HTTP status in free text, in the shapes statuses come in. A bare
// three-digit number is never a status: 401 in a file name, a line count or
// a port is not an answer from a server. Only 400–599 count.
var statusRes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bAPI Error:? ?\(?(\d{3})\b`),                                     // Claude Code: "API Error: 529 {…}", "API Error (529 {…})"
	regexp.MustCompile(`(?i)\berror code:? (\d{3})\b`),                                        // Python SDKs (aider, litellm): "Error code: 529 - {…}"
	regexp.MustCompile(`(?i)\bstatus(?:[_ ]?code)?["']?\s?[:=]?\s?(\d{3})\b`),                 // "unexpected status 401", "last status: 429", "status code 404", "status_code=401", "statusCode: 402", `"status": 401`
	regexp.MustCompile(`(?i)\bHTTP(?:/\d(?:\.\d)?"?| ?error| ?status)?:? ?(\d{3})\b`),         // "HTTP 429:", "HTTP/1.1 503", "HTTP Error 401:" (urllib), an access log's `"POST /v1 HTTP/1.1" 401`
	regexp.MustCompile(`(?i)\berror[:,]? \(?(\d{3})\b`),                                       // "Error: 400 {…}", "API error (429):", "OpenAI API error 402:", "unknown error, 520"
	regexp.MustCompile(`(?i)(?:^|[^\w ]|[^t] )code\\?"?'?\s*[:=]\s*(\d{3})\b`),                // JSON and Python dicts: "code": 429, \"code\": 429, 'code': 402, code: 429 (not "exit code: 1")
	regexp.MustCompile(`(?m)^\s*(\d{3}) (?:[{:]|[A-Z][a-z])`),                                 // "400 {"type":"error",…}", "402 This request requires more credits"
	regexp.MustCompile(`(?i)\b(\d{3}) status code\b`),                                         // Anthropic/OpenAI JS SDKs (cline): "429 status code (no body)"
	regexp.MustCompile(`(?i)\b(?:failed|rejected|returned|responded) (?:with )?\(?(\d{3})\b`), // "Request rejected (429)", "returned 401", "failed with 403"
	regexp.MustCompile(`\b(\d{3}) [a-z]+(?:_[a-z]+)*_(?:error|exceeded)\b`),                   // a status before its error type: "401 invalid_request_error"
	regexp.MustCompile(`\b[a-z]+(?:[._][a-z]+)*[._]error\]?:? \(?(\d{3})\b`),                  // a status after its error type: "[provider.api_error] 403", "api_error: 500"
	regexp.MustCompile(`\b(\d{3}) (?:` + reasonPhrases + `)\b`),                               // "401 Unauthorized", "[429] Too Many Requests"
	regexp.MustCompile(`(?i)\b(?:an? |the |got |with )(\d{3}) (?:error|response)\b`),          // "got a 401 error", "with 403 response"
}

// reasonPhrases are the HTTP reason phrases (RFC 9110, and 529, which
// Anthropic's API answers when overloaded) that follow a status.
const reasonPhrases = `Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|Gone|` +
	`Misdirected Request|Upgrade Required|Unavailable For Legal Reasons|` +
	`Payload Too Large|Content Too Large|Request Entity Too Large|Unprocessable Entity|Unprocessable Content|Too Many Requests|` +
	`Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Service Temporarily Unavailable|Gateway Timeout|Gateway Time-out|Overloaded|` +
	`Site is overloaded|Insufficient Balance`

// notStatusAfter is what follows a number that counts something: "401
// lines", "429ms", "500 files", "404 tests passed".
var notStatusAfter = regexp.MustCompile(`^(?:\s*(?:ms|s|secs?|seconds?|minutes?|lines?|files?|tests?|times|bytes|[KMG]i?B|items?|passed|failed|errors|warnings?|%|px|rows?|tokens?|chars?|characters?|words?)\b|\.\d|,\d{3})`)

// textStatus returns the first HTTP error status text reports that names a
// family of kinds (statusFamily), and where it stands. A status no family
// reads (409, 415, 418, …) is passed over: the text's other structure and
// its phrases decide.
func textStatus(text string) (int, int, bool) {
	best, code := -1, 0
	for _, re := range statusRes {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			n, _ := strconv.Atoi(text[m[2]:m[3]])
			if _, ok := statusFamily(n); !ok || notStatusAfter.MatchString(text[m[3]:]) {
				continue
			}
			if best < 0 || m[2] < best {
				best, code = m[2], n
			}
			break
		}
	}
	return code, best, best >= 0
}

// testOutput finds the marks of a test runner's report in a text: a
// command agent's stderr may be a test suite's, whose "expected status 200,
// got 401" is the code under test answering, not the agent's provider.
var testOutput = regexp.MustCompile(`(?m)^\s*(?:--- FAIL\b|FAIL\b|FAILED\b|not ok \d|=+ (?:FAILURES|ERRORS) =+|AssertionError\b|E\s+assert\b)|(?i:\bassert\w*\s*\(|\bassert\b[^\n]{1,80}(?:==|!=|<=|>=)|\b(?:expected|want(?:ed)?)\b[^\n]{0,80}\b(?:got|received|actual|but was)\b[^\n]{0,20}\b\d{3}\b|\b(?:expected|want(?:ed)?)\b[^\n]{0,20}\b\d{3}\b[^\n]{0,40}\b(?:got|received|actual|but was)\b|\bgot\b[^\n]{0,30}\b\d{3}\b[^\n]{0,20}\bwant\b)`)

// lookAlike reports whether structure found in a command agent's text may
// belong to a program it ran (a test suite) rather than to the agent: then
// a status or an error code alone does not decide.
func lookAlike(text string, anyProgram bool) bool {
	return anyProgram && testOutput.MatchString(text)
}

// stripANSI removes terminal colour and cursor escapes, which CLIs print
// around their error lines ("\x1b[91m\x1b[1mError: \x1b[0m…").
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRe.ReplaceAllString(s, "")
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07`)
