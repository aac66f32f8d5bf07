package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// A failure fingerprint names a failure by its shape rather than its
// words: the kind, and the error text with what differs between two
// occurrences of the same fault folded away (numbers, ids, hex, times,
// paths, URLs, quoted values, white space). Two cards that hit one fault
// (a suspended account, a revoked key, a broken main branch) get one
// fingerprint whatever their identifiers, workspaces and timestamps; two
// different faults almost never do. Correlation (the same failure across
// cards) and the repeat cap (the same failure again on one card) compare
// fingerprints, so they work on text no phrase table has seen.

// fingerprintText bounds how much of the normalised text is hashed: the
// head of an error names the fault; a long tail (a stack, a log) mostly
// adds noise that differs between occurrences.
const fingerprintText = 400

// folds are applied in order: the widest shapes first, so a URL's or a
// path's digits are not folded twice.
var folds = []struct {
	re  *regexp.Regexp
	sub string
}{
	{regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]"), ""},                        // terminal colours
	{regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>()\[\]{}]+`), "<url>"}, // URLs
	{quoted, ""}, // quoted values: see foldQuoted
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`), "<time>"}, // timestamps
	{regexp.MustCompile(`\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b`), "<time>"},                                         // clock times
	{path, ""}, // paths of two or more segments
	{regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`), "<id>"}, // UUIDs
	{regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}\b`), "<id>"},                                         // ULIDs (run and card ids)
	{regexp.MustCompile(`\b(?:0x)?[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b`), "<hex>"},                   // hex with letters and digits
	{number, ""},                     // numbers: see foldNumbers
	{regexp.MustCompile(`\s+`), " "}, // white space
}

var (
	path   = regexp.MustCompile(`(?:[A-Za-z]:)?(?:[~.]{0,2}[/\\][^\s/\\:"'<>()\[\]{},;]+){2,}[/\\]?`)
	quoted = regexp.MustCompile(`"(?:[^"\\\n]|\\.){0,200}"|'(?:[^'\\\n]|\\.){0,200}'|` + "`[^`\\n]{0,200}`")
	number = regexp.MustCompile(`\d+(?:\.\d+)?`)
	// status is the text before a number that makes it an HTTP status or an
	// error code, which names the fault (404 is not 500) and is kept.
	status = regexp.MustCompile(`(?i)(?:status|code|http(?:/[\d.]+)?|error)[\s:=(]*$`)
)

// foldPath folds a path of two or more segments to its last one: where a
// file lives differs between cards and machines, which file failed does
// not ("<path>/go.mod", "<path>/store").
func foldPath(p string) string {
	base := strings.TrimRight(p, "/\\")
	if i := strings.LastIndexAny(base, "/\\"); i >= 0 {
		base = base[i+1:]
	}
	return "<path>/" + base
}

// foldQuoted folds a quoted value that is data, the part of a message that
// differs between occurrences: one with a digit, a path separator or more
// than four words (a title, a sentence of the user's). A quoted word or two
// ("permission denied", 'map', a JSON key or type) names the fault and is
// kept.
func foldQuoted(q string) string {
	inner := q[1 : len(q)-1]
	if strings.ContainsAny(inner, "0123456789/\\") || strings.Count(inner, " ") > 3 {
		return "<q>"
	}
	return q
}

// foldNumbers folds numbers to #, except a three-digit status after the
// words that make it one ("status 404", "HTTP/1.1 503", "code: 429").
func foldNumbers(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range number.FindAllStringIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		n := s[m[0]:m[1]]
		if len(n) == 3 && n[0] >= '1' && n[0] <= '5' && status.MatchString(s[max(0, m[0]-16):m[0]]) {
			b.WriteString(n)
		} else {
			b.WriteString("#")
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// longToken is a word of eight or more letters, digits, _ or -; one with
// both letters and digits is an id, a key or a request id (acct_8f2k1Lx9,
// sk-live-abc123, req_01HZX…), folded before the hex and number folds
// (tokenFold is their place in folds).
var longToken = regexp.MustCompile(`[A-Za-z0-9_][A-Za-z0-9_-]{7,}`)

const tokenFold = 7

func foldToken(tok string) string {
	if strings.ContainsAny(tok, "0123456789") && strings.IndexFunc(tok, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }) >= 0 {
		return "<id>"
	}
	return tok
}

// NormalizeError is msg with what differs between occurrences of one fault
// folded away, trimmed and bounded: the text a fingerprint is made of, and
// what an operator is shown as the failure's shape.
func NormalizeError(msg string) string {
	s := strings.ToValidUTF8(msg, "")
	if len(s) > 4*fingerprintText {
		s = s[:4*fingerprintText]
	}
	for i, f := range folds {
		if i == tokenFold {
			s = longToken.ReplaceAllStringFunc(s, foldToken)
		}
		switch f.re {
		case quoted:
			s = quoted.ReplaceAllStringFunc(s, foldQuoted)
		case number:
			s = foldNumbers(s)
		case path:
			s = path.ReplaceAllStringFunc(s, foldPath)
		default:
			s = f.re.ReplaceAllString(s, f.sub)
		}
	}
	s = strings.TrimSpace(s)
	if len(s) > fingerprintText {
		// The head names the fault, and so does the tail: warnings or a
		// banner printed first must not hide the error that ends the text.
		half := (fingerprintText - len(" … ")) / 2
		s = strings.ToValidUTF8(s[:half], "") + " … " + strings.ToValidUTF8(s[len(s)-half:], "")
	}
	return s
}

// Fingerprint is the failure's fingerprint: "kind:" and 16 hex digits of a
// hash of the normalised message. A run with no text is fingerprinted by
// its kind and exit code alone ("kind:exit1"; exitCode < 0: "kind:exit"),
// which tells too little to hold a profile or block a card on
// (Informative). Success has none.
func Fingerprint(kind Kind, msg string, exitCode int) string {
	if kind == KindSucceeded || kind == KindNone {
		return ""
	}
	text := NormalizeError(msg)
	if text == "" {
		code := ""
		if exitCode >= 0 {
			code = strconv.Itoa(exitCode)
		}
		return string(kind) + ":exit" + code
	}
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + text))
	return string(kind) + ":" + hex.EncodeToString(sum[:8])
}

// Informative reports whether fp was made from error text: two failures
// with no text but an exit code are alike in too little to say they are
// one fault.
func Informative(fp string) bool {
	_, rest, ok := strings.Cut(fp, ":")
	return ok && rest != "" && !strings.HasPrefix(rest, "exit")
}

// FingerprintOf is the fingerprint of a verdict: made from its message,
// except for a verdict whose message is drover's own words, the same for
// every such failure: an agent that failed with no error text (an exit
// code alone), or a run drover stopped itself (a timeout, a stall), which
// are fingerprinted by their exit and tell too little to hold a profile or
// block a card on.
func FingerprintOf(c Classification, exitCode int) string {
	msg := c.Message
	if c.Kind == KindAgentFailed && (strings.HasPrefix(c.Source, "exit_code:") || c.Source == "signal") || strings.HasPrefix(c.Source, "killed:") {
		msg = ""
	}
	return Fingerprint(c.Kind, msg, exitCode)
}

// FingerprintKind is the kind a fingerprint was made for.
func FingerprintKind(fp string) Kind {
	k, _, _ := strings.Cut(fp, ":")
	return Kind(k)
}
