package claude_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent/internal/fixtures"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/policy"
)

// TestFixtures runs every captured Claude Code run through the parser and
// Classify and checks the kind is the expected one or an honest alternative
// (fixtures.Run).
func TestFixtures(t *testing.T) { fixtures.Run(t, "claude", "testdata", registry.BuildSignals) }

// Claude Code reports the plan's usage window on every run of a
// subscription, in a rate_limit_event whose status is "allowed" (or
// "allowed_warning") while the window lasts, with resetsAt its end hours
// away. A rate limit of the API in such a run (the organisation's tokens a
// minute) waits for the API, not for the window's end: only a rejected
// window's reset is the run's retry time, and not even that while the run
// goes on past it as extra usage (overage).
func TestAnAllowedUsageWindowIsNoRetryTime(t *testing.T) {
	stdout, err := os.ReadFile("testdata/rate_limit_429/stdout")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	resets := now.Add(4 * time.Hour)
	overage := fmt.Sprintf(`"status":"rejected","resetsAt":%d,"rateLimitType":"five_hour","overageStatus":"allowed","isUsingOverage":true`, resets.Unix())
	for _, status := range []string{"allowed", "allowed_warning", "rejected", "on overage"} {
		info := fmt.Sprintf(`"status":%q,"resetsAt":%d,"rateLimitType":"five_hour","isUsingOverage":false`, status, resets.Unix())
		if status == "on overage" {
			info = overage
		}
		event := `{"type":"rate_limit_event","rate_limit_info":{` + info + `}}`
		init, rest, _ := bytes.Cut(stdout, []byte("\n"))
		out := append(append(append(append([]byte{}, init...), '\n'), event+"\n"...), rest...)
		c := policy.Classify(registry.BuildSignals("claude", 1, out, nil, now), nil)
		switch status {
		case "rejected":
			if c.Kind != policy.KindUsageLimited || !c.RetryAt.Equal(resets) {
				t.Errorf("%s window: %s, retry at %v; want usage_limited at %v", status, c.Kind, c.RetryAt, resets)
			}
		default:
			if c.Kind != policy.KindRateLimited || !c.RetryAt.IsZero() || c.RetryAfter > time.Minute {
				t.Errorf("%s window: %s, retry at %v after %s; want rate_limited with the API's own wait", status, c.Kind, c.RetryAt, c.RetryAfter)
			}
		}
	}
}
