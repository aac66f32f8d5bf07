package config

import (
	"strings"
	"testing"
	"time"
)

func TestRetentionDefaultsAndPeriods(t *testing.T) {
	cfg := mustParse(t, "---\n---\n")
	if r := cfg.Retention; r.Events != 90*Day || r.Runs != 180*Day || r.Logs != 30*Day {
		t.Errorf("default retention %+v, want 90d, 180d, 30d", r)
	}
	cfg = mustParse(t, "---\nretention: {events: 7d, runs: forever, logs: 36h}\n---\n")
	if r := cfg.Retention; r.Events != 7*Day || r.Runs != 0 || r.Logs != 36*time.Hour {
		t.Errorf("retention %+v, want 7d, forever, 36h", r)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"retention: {events: 90s}", "retention.events"},
		{"retention: {runs: -3d}", "retention.runs"},
		{"retention: {logs: soon}", "retention.logs"},
		{"retention: {log: 3d}", "retention.log"},
	} {
		_, err := Parse([]byte("---\n"+tc.yaml+"\n---\n"), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s", tc.yaml, err, tc.want)
		}
	}
	if got := RetentionString(90 * Day); got != "90d" {
		t.Errorf("RetentionString(90d) = %q", got)
	}
}
