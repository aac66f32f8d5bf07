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
	// "retry-after: 20", "Retry-After=20", "retry after 5000ms", "retry
	// after 2 minutes"; a number followed by -, :, / or . and a digit is a
	// date or a time, not a delay (the last group says so).
	retryAfterRe = regexp.MustCompile(`(?i)\bretry[- _]after["']?\s*[:=]?\s*(\d+(?:\.\d+)?)(?:\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b)?([-:/.]\d)?`)
	// "Please try again in 20s", "try again in 1.5 seconds", "retry in 3
	// minutes", Claude Code's "Retrying in 2892 seconds…", "resets in 4h".
	tryAgainInRe = regexp.MustCompile(`(?i)\b(?:try again|retry(?:ing)?|resets?|available again) in\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b`)
	// "Retry after 2025-03-07 12:28:18 +0000 UTC" (Cody), an RFC 3339
	// time, or an HTTP-date ("Retry-After: Wed, 21 Oct 2026 07:28:00 GMT").
	retryAfterDateRe = regexp.MustCompile(`(?i)\bretry[- _]after["']?\s*[:=]?\s*(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:\s*(?:Z|[+-]\d{2}:?\d{2}))?|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)`)
)

// RetryHint reads a retry time out of an error text. after is a relative
// delay ("retry-after: 20", "try again in 20s"); at is an absolute time
// ("resets 3pm (UTC)", "try again at 7:05 PM", "Retry after 2026-03-07
// 12:28:18 +0000"), resolved against now: a clock time that passed more
// than two hours ago means tomorrow, one that passed less than that has
// passed (no time: the wait is over, or was stated before the agent's own
// retries). A time without a zone is read in now's location (the CLI runs
// on the same machine as drover). Where the text states several waits the
// last one counts: it is the latest said. With a zero now, clock times are
// not resolved. Pure: it never reads the clock.
var limitEpochRe = regexp.MustCompile(`(?i)usage limit reached\|(\d{9,11})\b`)

func RetryHint(text string, now time.Time) (after time.Duration, at time.Time) {
	for _, m := range retryAfterRe.FindAllStringSubmatch(text, -1) {
		if m[3] == "" {
			if d := parseAmount(m[1], cmp.Or(m[2], "s")); d > 0 {
				after = d
			}
		}
	}
	if after == 0 {
		for _, m := range tryAgainInRe.FindAllStringSubmatch(text, -1) {
			if d := parseAmount(m[1], m[2]); d > 0 {
				after = d
			}
		}
	}
	if now.IsZero() {
		return after, time.Time{}
	}
	// Claude Code 1.x: "Claude AI usage limit reached|1735000000" (the reset
	// as a Unix time in seconds).
	if m := limitEpochRe.FindStringSubmatch(text); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			if t := time.Unix(sec, 0); t.After(now) && t.Sub(now) < 31*24*time.Hour {
				return after, t
			}
		}
	}
	if ms := retryAfterDateRe.FindAllStringSubmatch(text, -1); ms != nil {
		if t, ok := parseRetryDate(ms[len(ms)-1][1]); ok {
			if t.After(now) && t.Sub(now) < maxHint {
				return after, t
			}
			return after, time.Time{} // passed: the wait is over
		}
	}
	for _, re := range []*regexp.Regexp{resetsClockRe, tryAgainAtRe} {
		if ms := re.FindAllStringSubmatch(text, -1); ms != nil {
			m := ms[len(ms)-1]
			if t, ok := resolveClock(m[1], m[2], m[3], m[4], now); ok {
				return after, t
			}
		}
	}
	return after, time.Time{}
}

// parseRetryDate reads the absolute forms retryAfterDateRe finds.
func parseRetryDate(s string) (time.Time, bool) {
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	s = strings.Replace(strings.TrimSpace(s), "T", " ", 1)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05.999999999 -07:00", "2006-01-02 15:04:05.999999999Z", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, strings.ReplaceAll(s, "  ", " ")); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// maxHint bounds a believable relative delay; anything longer is ignored.
const maxHint = 31 * 24 * time.Hour

func parseAmount(num, unit string) time.Duration {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0
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
		return 0
	}
	return time.Duration(f * float64(per))
}

// resolveClock turns "10", "18", "pm", "UTC" into the next such instant after now.
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
			return time.Time{}, false
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
