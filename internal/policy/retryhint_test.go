package policy

import (
	"testing"
	"time"
)

func TestRetryHint(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC)
	est := time.FixedZone("EST", -5*3600)
	cases := []struct {
		name  string
		text  string
		now   time.Time
		after time.Duration
		at    time.Time
	}{
		{"claude resets utc", "You've hit your session limit · resets 10:18pm (UTC)", now, 0, time.Date(2026, 11, 29, 22, 18, 0, 0, time.UTC)},
		{"passed today means tomorrow", "resets 3pm (UTC)", now, 0, time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)},
		{"resets 12am", "resets 12am (UTC)", now, 0, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{"offset zone", "resets 11pm (UTC+2)", now, 0, time.Date(2026, 11, 29, 23, 0, 0, 0, time.FixedZone("UTC+2", 7200))},
		{"codex try again at, local", "purchase more credits or try again at 9:33 PM.", now, 0, time.Date(2026, 11, 29, 21, 33, 0, 0, time.UTC)},
		{"codex try again at, other local zone", "try again at 7:05 PM.", now.In(est), 0, time.Date(2026, 11, 29, 19, 5, 0, 0, est)},
		{"24h clock", "try again at 21:05", now, 0, time.Date(2026, 11, 29, 21, 5, 0, 0, time.UTC)},
		{"zero now leaves clock times alone", "resets 10:18pm (UTC)", time.Time{}, 0, time.Time{}},
		{"retry-after header", "429 Too Many Requests retry-after: 20", now, 20 * time.Second, time.Time{}},
		{"try again in seconds", "Rate limit reached. Please try again in 1.5s.", now, 1500 * time.Millisecond, time.Time{}},
		{"try again in minutes", "please try again in 3 minutes", now, 3 * time.Minute, time.Time{}},
		{"absurd delay is ignored", "try again in 9999999 hours", now, 0, time.Time{}},
		{"absurd retry-after is ignored", "retry-after: 99999999999", now, 0, time.Time{}},
		{"bare number is not a time", "resets 3", now, 0, time.Time{}},
		{"nonsense hour", "resets 13pm", now, 0, time.Time{}},
		{"nothing", "Request timed out", now, 0, time.Time{}},
		{"retry after in milliseconds", "429: retry after 5000ms", now, 5 * time.Second, time.Time{}},
		{"retry after in milliseconds, spelled", "retry after 2500 milliseconds", now, 2500 * time.Millisecond, time.Time{}},
		{"retry after in hours", "rate limited; retry after 1 hour", now, time.Hour, time.Time{}},
		{"retry after in minutes", "Retry after 2 minutes.", now, 2 * time.Minute, time.Time{}},
		{"the last wait stated counts", "const h = {'retry-after': 3600}\nError: 429 Too Many Requests retry-after: 2", now, 2 * time.Second, time.Time{}},
		{"retrying in seconds", "Retrying in 2892 seconds… (attempt 9/10)", now, 2892 * time.Second, time.Time{}},
		{"a date is no delay (Cody)", "You have exceeded the concurrency limit of 3. Retry after 2026-11-30 07:28:18 +0000 UTC", now, 0, time.Date(2026, 11, 30, 7, 28, 18, 0, time.UTC)},
		{"an RFC 3339 time", "retry-after: 2026-11-29T20:00:00Z", now, 0, time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)},
		{"an HTTP-date", "Retry-After: Sun, 29 Nov 2026 21:00:00 GMT", now, 0, time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)},
		{"a date passed is over", "Retry after 2025-03-07 12:28:18 +0000 UTC", now, 0, time.Time{}},
		{"a clock time just passed has passed", "try again at 6:05 PM (UTC)", now, 0, time.Time{}},
		{"a clock time passed long ago is tomorrow's", "resets 9am (UTC)", now, 0, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		{"a number in prose is no wait", "retry after 2026", now, 0, time.Time{}},
		{"a header dict's quoted value", "openai.RateLimitError: headers={'retry-after': '20', 'x-request-id': 'req_1'}", now, 20 * time.Second, time.Time{}},
		{"a JSON field", `{"error": {"code": 429, "retry_after": 7}}`, now, 7 * time.Second, time.Time{}},
		{"a quoted date", `"Retry-After": "Sun, 29 Nov 2026 21:00:00 GMT"`, now, 0, time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)},
		{"a count in prose is no wait", "retry after 500 more requests", now, 0, time.Time{}},
		{"prose", "retry after fixing the config", now, 0, time.Time{}},
		{"a day is no wait", "retry after 12/05", now, 0, time.Time{}},
		{"a version is no wait", "retry-after: 1.2.3", now, 0, time.Time{}},
		{"the unit is on the same line", "Retry-After: 30\nmin-tokens: 5", now, 30 * time.Second, time.Time{}},
		{"the unit is on the same line, ms", "Retry-After: 5\nms-azureml-model-error: x", now, 5 * time.Second, time.Time{}},
		{"OpenAI's compound wait", "Rate limit reached for gpt-4o. Please try again in 1m30s.", now, 90 * time.Second, time.Time{}},
		{"OpenAI's compound wait with zero seconds", "Please try again in 6m0s. Visit https://platform.openai.com", now, 6 * time.Minute, time.Time{}},
		{"Gemini's retryDelay", `"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "40s"`, now, 40 * time.Second, time.Time{}},
		{"the last wait counts across forms", "You've hit your limit · resets 9am (UTC)\nretry-after: 2", now, 2 * time.Second, time.Time{}},
		{"a last wait of zero counts", "retry-after: 3600\n... later: Retry-After: 0", now, 0, time.Time{}},
		{"a bare reset after a clock time takes nothing", "resets 10:18pm (UTC). Use /reset 3", now, 0, time.Date(2026, 11, 29, 22, 18, 0, 0, time.UTC)},
		{"a date without a zone is local", "retry after 2026-11-29 20:00:00", now.In(est), 0, time.Date(2026, 11, 29, 20, 0, 0, 0, est)},
		{"a lowercase RFC 3339 time", "retry-after: 2026-11-29t20:00:00z", now, 0, time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after, at := RetryHint(c.text, c.now)
			if after != c.after || !at.Equal(c.at) {
				t.Errorf("RetryHint(%q) = %v, %v; want %v, %v", c.text, after, at, c.after, c.at)
			}
		})
	}
}

func TestRetryHintUsageLimitEpoch(t *testing.T) {
	now := time.Unix(1735000000-3600, 0)
	_, at := RetryHint("Claude AI usage limit reached|1735000000", now)
	if !at.Equal(time.Unix(1735000000, 0)) {
		t.Fatalf("reset = %v, want the stamped time", at)
	}
	if _, at := RetryHint("Claude AI usage limit reached|1735000000", time.Unix(1735000000+10, 0)); !at.IsZero() {
		t.Fatalf("a reset in the past must be ignored, got %v", at)
	}
}
