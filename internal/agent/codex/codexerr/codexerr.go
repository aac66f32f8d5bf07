// Package codexerr reads the HTTP status out of Codex's error texts. Both of
// drover's readers of Codex use it: the exec --json parser (package codex),
// whose events carry text only, and the app-server client (codex/appserver),
// as the fallback when an error's codexErrorInfo carries no status.
package codexerr

import (
	"regexp"
	"strconv"
	"strings"
)

// "unexpected status 403 Forbidden: …", "exceeded retry limit, last status: 429 Too Many Requests"
var statusRe = regexp.MustCompile(`(?:unexpected status|last status:)\s*(\d{3})\b`)

// cannedStatus gives back the HTTP status of the errors codex replaces by
// fixed texts of its own, dropping both the status and the API's message
// (codex 0.171.0; the Display strings of its typed errors, which change far
// less than the API's wording).
var cannedStatus = []struct {
	text   string
	status int
}{
	{"currently experiencing high demand", 500}, // an HTTP 500; "We’re" with a curly apostrophe
	{"Selected model is at capacity", 503},      // an overloaded server (503 server_is_overloaded)
}

// Status is the HTTP status msg reports, or 0.
func Status(msg string) int {
	if m := statusRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for _, c := range cannedStatus {
		if strings.Contains(msg, c.text) {
			return c.status
		}
	}
	return 0
}
