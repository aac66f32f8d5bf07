package policy

import (
	"cmp"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	// "You've hit your session limit · resets 10:18pm (UTC)" (Claude Code 2.1.197)
	resetsClockRe = regexp.MustCompile(`(?i)\bresets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(([^)]+)\))?`)
	// "… or try again at 9:33 PM." (Codex CLI 0.171.0)
	tryAgainAtRe = regexp.MustCompile(`(?i)\btry again at\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(([^)]+)\))?`)
	// A header or a field ("retry-after: 20", "Retry-After=20",
	// "retry_after": 20, a dict's 'retry-after': '20'): the number alone is
	// seconds. In words ("retry
	// after 5000ms", "retry after 2 minutes") only with its unit: "retry
	// after 500 more requests" states no wait. A number followed by -, :, /
	// or . and a digit is a date, a time or a version, not a delay (the last
	// group says so; RE2 prefers the longer number, so it cannot be dodged).
	retryAfterRe = regexp.MustCompile(`(?i)\bretry[- _]after["']?([ \t]*[:=])?[ \t]*["']?(\d+(?:\.\d+)?)(?:[ \t]*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b)?([-:/.]\d)?`)
	// "Please try again in 20s", "in 1.5 seconds", "retry in 3 minutes",
	// OpenAI's "in 1m30s" and "6m0s", Claude Code's "Retrying in 2892
	// seconds…", "resets in 4h".
	tryAgainInRe = regexp.MustCompile(`(?i)\b(?:try again|retry(?:ing)?|resets?|available again) in[ \t]+((?:\d+(?:\.\d+)?(?:ms|h|m|s))+|\d+(?:\.\d+)?[ \t]*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?))\b`)
	// google.rpc.RetryInfo as Gemini's errors carry it: "retryDelay": "40s".
	retryDelayRe = regexp.MustCompile(`"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"`)
	// "Retry after 2025-03-07 12:28:18 +0000 UTC" (Cody), an RFC 3339
	// time, or an HTTP-date ("Retry-After: Wed, 21 Oct 2026 07:28:00 GMT").
	retryAfterDateRe = regexp.MustCompile(`(?i)\bretry[- _]after["']?[ \t]*[:=]?[ \t]*["']?(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[ \t]*(?:Z|[+-]\d{2}:?\d{2}))?|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)`)
	// Claude Code 1.x: "Claude AI usage limit reached|1735000000" (the
	// reset as a Unix time in seconds).
	limitEpochRe = regexp.MustCompile(`(?i)usage limit reached\|(\d{9,11})\b`)
	numUnitRe    = regexp.MustCompile(`^(\d+(?:\.\d+)?)[ \t]*([a-zA-Z]+)$`)
)

// RetryHint reads a retry time out of an error text. after is a relative
// delay ("retry-after: 20", "try again in 20s"); at is an absolute time
// ("resets 3pm (UTC)", "try again at 7:05 PM", "Retry after 2026-03-07
// 12:28:18 +0000"), resolved against now: a clock time that passed more
// than two hours ago means tomorrow, one that passed less than that has
// passed (no time: the wait is over, or was stated before the agent's own
// retries). A time without a zone is read in now's location (the CLI runs
// on the same machine as drover). Where the text states several waits, in
// whatever forms, the last one counts: it is the latest said ("Retry-After:
// 0" included). At most one of after and at is set. With a zero now,
// absolute times are not resolved. Pure: it never reads the clock.
func RetryHint(text string, now time.Time) (after time.Duration, at time.Time) {
	last := -1
	take := func(pos int, a time.Duration, t time.Time) {
		if pos > last {
			last, after, at = pos, a, t
		}
	}
	for _, m := range retryAfterRe.FindAllStringSubmatchIndex(text, -1) {
		sep, unit, date := m[2] >= 0, sub(text, m, 3), m[8] >= 0
		if date || (!sep && unit == "") {
			continue
		}
		if d, ok := parseAmount(sub(text, m, 2), cmp.Or(unit, "s")); ok {
			take(m[0], d, time.Time{})
		}
	}
	for _, m := range tryAgainInRe.FindAllStringSubmatchIndex(text, -1) {
		if d, ok := parseWait(sub(text, m, 1)); ok {
			take(m[0], d, time.Time{})
		}
	}
	for _, m := range retryDelayRe.FindAllStringSubmatchIndex(text, -1) {
		if d, ok := parseAmount(sub(text, m, 1), "s"); ok {
			take(m[0], d, time.Time{})
		}
	}
	if !now.IsZero() {
		absolute := func(pos int, t time.Time) {
			if t.After(now) && t.Sub(now) < maxHint {
				take(pos, 0, t)
			} else if !t.After(now) {
				take(pos, 0, time.Time{}) // passed: the wait is over
			}
		}
		for _, m := range limitEpochRe.FindAllStringSubmatchIndex(text, -1) {
			if sec, err := strconv.ParseInt(sub(text, m, 1), 10, 64); err == nil {
				absolute(m[0], time.Unix(sec, 0))
			}
		}
		for _, m := range retryAfterDateRe.FindAllStringSubmatchIndex(text, -1) {
			if t, ok := parseRetryDate(sub(text, m, 1), now.Location()); ok {
				absolute(m[0], t)
			}
		}
		for _, re := range []*regexp.Regexp{resetsClockRe, tryAgainAtRe} {
			for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
				if t, ok := resolveClock(sub(text, m, 1), sub(text, m, 2), sub(text, m, 3), sub(text, m, 4), now); ok {
					take(m[0], 0, t) // zero when it just passed
				}
			}
		}
	}
	return after, at
}

// sub is submatch i of m in text, "" when it did not take part.
func sub(text string, m []int, i int) string {
	if 2*i+1 >= len(m) || m[2*i] < 0 {
		return ""
	}
	return text[m[2*i]:m[2*i+1]]
}

// parseWait reads "20s", "1m30s", "1.5 seconds", "3 minutes".
func parseWait(s string) (time.Duration, bool) {
	if d, err := time.ParseDuration(strings.ToLower(s)); err == nil {
		return d, d >= 0 && d <= maxHint
	}
	if m := numUnitRe.FindStringSubmatch(s); m != nil {
		return parseAmount(m[1], m[2])
	}
	return 0, false
}

// parseRetryDate reads the absolute forms retryAfterDateRe finds; one
// without a zone is in loc.
func parseRetryDate(s string, loc *time.Location) (time.Time, bool) {
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	s = strings.Join(strings.Fields(strings.Replace(strings.ToUpper(s), "T", " ", 1)), " ")
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05.999999999 -07:00", "2006-01-02 15:04:05.999999999Z", "2006-01-02 15:04:05.999999999 Z", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// maxHint bounds a believable relative delay; anything longer is ignored.
const maxHint = 31 * 24 * time.Hour

// parseAmount reads a number of unit (ms, s, m or h and their longer
// spellings); false for no number or more than maxHint.
func parseAmount(num, unit string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	per := time.Second
	u := strings.ToLower(unit)
	switch {
	case strings.HasPrefix(u, "ms"), strings.HasPrefix(u, "milli"):
		per = time.Millisecond
	case strings.HasPrefix(u, "h"):
		per = time.Hour
	case strings.HasPrefix(u, "m"):
		per = time.Minute
	}
	if f*float64(per) > float64(maxHint) {
		return 0, false
	}
	return time.Duration(f * float64(per)), true
}

// resolveClock turns "10", "18", "pm", "UTC" into the next such instant
// after now; into the zero time, still ok, when that time passed under two
// hours ago (the wait is over); false when it is no clock time.
func resolveClock(hs, ms, ampm, zone string, now time.Time) (time.Time, bool) {
	h, err := strconv.Atoi(hs)
	if err != nil {
		return time.Time{}, false
	}
	m := 0
	if ms != "" {
		if m, err = strconv.Atoi(ms); err != nil || m > 59 {
			return time.Time{}, false
		}
	}
	switch strings.ToLower(ampm) {
	case "am":
		if h < 1 || h > 12 {
			return time.Time{}, false
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h < 1 || h > 12 {
			return time.Time{}, false
		}
		if h != 12 {
			h += 12
		}
	default:
		if ms == "" || h > 23 { // a bare "resets 3" is not a time
			return time.Time{}, false
		}
	}
	loc := zoneLocation(zone, now.Location())
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), h, m, 0, 0, loc)
	if !t.After(now) {
		if now.Sub(t) < 2*time.Hour {
			// Just passed: the reset came while the agent retried, or
			// before a recovery read the run's log.
			return time.Time{}, true
		}
		t = t.AddDate(0, 0, 1)
	}
	return t, true
}

var offsetRe = regexp.MustCompile(`^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$`)

// zoneLocation reads "UTC", "GMT", "UTC+2", "+05:30" or an IANA name; anything
// else falls back to def.
func zoneLocation(zone string, def *time.Location) *time.Location {
	z := strings.TrimSpace(zone)
	switch strings.ToUpper(z) {
	case "":
		return def
	case "UTC", "GMT", "Z":
		return time.UTC
	}
	if m := offsetRe.FindStringSubmatch(strings.ToUpper(z)); m != nil {
		h, _ := strconv.Atoi(m[2])
		mm, _ := strconv.Atoi(m[3])
		off := h*3600 + mm*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(z, off)
	}
	if strings.Contains(z, "/") {
		if loc, err := time.LoadLocation(z); err == nil {
			return loc
		}
	}
	return def
}
