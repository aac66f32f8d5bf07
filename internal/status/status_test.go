package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/status/statustest"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// seeded is statustest's seeded board and its snapshot at now.
func seeded(t *testing.T) (statustest.World, status.State) {
	t.Helper()
	st, cfg := statustest.Open(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	w := statustest.Seed(t, st, cfg, now)
	s, err := status.Snapshot(context.Background(), st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	return w, s
}

func TestSnapshot(t *testing.T) {
	w, s := seeded(t)
	if s.Counts.Running != 1 || len(s.Running) != 1 {
		t.Fatalf("running = %+v", s.Running)
	}
	r := s.Running[0]
	if r.IssueIdentifier != w.Running.Identifier || r.Attempt != 2 || r.MaxAttempts != 5 || r.Tokens.TotalTokens != 2000 || r.CostUSD != 0.42 ||
		r.SessionID != w.RunID || r.LastMessage != "running go test ./..." || r.ElapsedS < 89 || r.LastEvent != "claimed" {
		t.Fatalf("running row = %+v", r)
	}
	if s.Counts.Retrying != 1 || s.Retrying[0].IssueIdentifier != w.Retrying.Identifier || s.Retrying[0].Attempt != 2 ||
		s.Retrying[0].LastAttempt != 1 || s.Retrying[0].Kind != "agent_failed" || s.Retrying[0].Error != "tests failed: 3 failures" ||
		!s.Retrying[0].DueAt.Equal(w.Now.Add(90*time.Second)) {
		t.Fatalf("retrying = %+v", s.Retrying)
	}
	if s.Counts.Blocked != 1 || s.Blocked[0].GaveUp == nil || s.Blocked[0].BlockReason.How == "" {
		t.Fatalf("blocked = %+v", s.Blocked)
	}
	if s.Counts.Parked != 1 || s.Parked[0].Question != "Blue or green?" {
		t.Fatalf("parked = %+v", s.Parked)
	}
	if len(s.Agents) != 2 || s.Agents[0].Name != "script" || s.Agents[0].State != "paused" || s.Agents[0].Kind != "command" || s.Agents[1].State != "closed" || !s.Agents[1].Default {
		t.Fatalf("agents = %+v", s.Agents)
	}
	if s.Spend.DayCapUSD != 10 || s.Spend.PerCardCapUSD != 2 || s.Spend.TodayUSD < 0.52-1e-9 || s.Spend.Paused {
		t.Fatalf("spend = %+v", s.Spend)
	}
	codes := map[string]bool{}
	for _, e := range s.Errors {
		codes[e.Code] = true
	}
	if !codes["config_error"] || !codes["notify_failing"] {
		t.Fatalf("errors = %+v", s.Errors)
	}
	if len(s.Nodes) != 1 || s.Nodes[0].LastTick == nil || s.Nodes[0].Stale {
		t.Fatalf("nodes = %+v", s.Nodes)
	}
	if len(s.Columns) != 8 || s.Counts.Cards != 5 {
		t.Fatalf("columns = %+v", s.Columns)
	}
	if s.CodexTotals.InputTokens != 1200 || s.CodexTotals.TotalTokens != 2000 || s.CodexTotals.SecondsRunning < 89 {
		t.Fatalf("totals = %+v", s.CodexTotals)
	}
}

// TestSymphonyShape checks the JSON field names Symphony's clients read.
func TestSymphonyShape(t *testing.T) {
	_, s := seeded(t)
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	CheckSymphony(t, m)
}

// CheckSymphony asserts Symphony's /api/v1/state fields are present with
// JSON types Symphony's clients expect.
func CheckSymphony(t *testing.T, m map[string]any) {
	t.Helper()
	has := func(obj map[string]any, where string, keys ...string) {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s: missing %q", where, k)
			}
		}
	}
	has(m, "state", "generated_at", "counts", "running", "retrying", "codex_totals", "rate_limits")
	has(m["counts"].(map[string]any), "counts", "running", "retrying")
	for _, r := range m["running"].([]any) {
		row := r.(map[string]any)
		has(row, "running[]", "issue_id", "issue_identifier", "state", "session_id", "turn_count", "last_event", "last_message", "started_at", "last_event_at", "tokens")
		has(row["tokens"].(map[string]any), "running[].tokens", "input_tokens", "output_tokens", "total_tokens")
	}
	for _, r := range m["retrying"].([]any) {
		has(r.(map[string]any), "retrying[]", "issue_id", "issue_identifier", "attempt", "due_at", "error")
	}
	has(m["codex_totals"].(map[string]any), "codex_totals", "input_tokens", "output_tokens", "total_tokens", "seconds_running")
	if _, err := time.Parse(time.RFC3339, m["generated_at"].(string)); err != nil {
		t.Errorf("generated_at: %v", err)
	}
}

func TestIssueDetail(t *testing.T) {
	st, cfg := statustest.Open(t)
	now := time.Now().UTC()
	w := statustest.Seed(t, st, cfg, now)
	is, err := status.IssueDetail(context.Background(), st, cfg, w.Running.Identifier, now)
	if err != nil {
		t.Fatal(err)
	}
	if is.Status != "running" || is.Running == nil || is.Workspace.Path != "/tmp/ws/DRV-2" || len(is.Logs.CodexSessionLogs) != 1 || len(is.RecentEvents) == 0 {
		t.Fatalf("issue = %+v", is)
	}
	is, _ = status.IssueDetail(context.Background(), st, cfg, w.Retrying.Identifier, now)
	if is.Status != "retrying" || is.Retry == nil || is.Retry.Attempt != 2 || is.LastError == nil {
		t.Fatalf("issue = %+v", is)
	}
	if _, err := status.IssueDetail(context.Background(), st, cfg, "DRV-999", now); err != status.ErrNotFound {
		t.Fatalf("err = %v", err)
	}
}

func TestRender(t *testing.T) {
	w, s := seeded(t)
	now := w.Now
	var b bytes.Buffer
	status.Render(&b, s)
	out := b.String()
	for _, want := range []string{"RUNNING (1)", "DRV-2", "2/5", "1m3", "$0.42", "RETRY QUEUE (1)", "1m30s", "tests failed: 3 failures",
		"gave up after 5 attempts: agent_failed", "how:   fix the spec", "asks: Blue or green?", "script: paused",
		"drover agent resume script", "of $10.00 per day", "config_error [node:node-a]", "notify_failing", "last tick 3s ago", "ready 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	// An empty store renders too.
	st2, _ := statustest.Open(t)
	s2, err := status.Snapshot(context.Background(), st2, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	status.Render(&b, s2)
	if !strings.Contains(b.String(), "nothing running") {
		t.Fatal(b.String())
	}
}

func TestDur(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "now", 45 * time.Second: "45s", 185 * time.Second: "3m05s", 130 * time.Minute: "2h10m", 76 * time.Hour: "3d4h"} {
		if got := status.Dur(d); got != want {
			t.Errorf("Dur(%v) = %q, want %q", d, got, want)
		}
	}
}

// The latest garbage collection shows in status: when, what it pruned and
// how many bytes of logs it removed, beside the retention periods.
func TestRetentionShowsTheLastCollection(t *testing.T) {
	st, cfg := statustest.Open(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	ctx := context.Background()
	s, err := status.Snapshot(ctx, st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Retention.LastGC != nil || s.Retention.Events != "90d" || s.Retention.Runs != "180d" || s.Retention.Logs != "30d" {
		t.Fatalf("retention before any collection = %+v", s.Retention)
	}
	rep := store.GCReport{At: now.Add(-2 * time.Minute), Events: 1200, Runs: 7, Outbox: 3, Logs: 7, LogBytes: 3 << 20, DurationMS: 42}
	if err := st.(store.Pruner).RecordGC(ctx, rep); err != nil {
		t.Fatal(err)
	}
	s, _ = status.Snapshot(ctx, st, cfg, now)
	if s.Retention.LastGC == nil || *s.Retention.LastGC != rep {
		t.Fatalf("last gc = %+v, want %+v", s.Retention.LastGC, rep)
	}
	var b bytes.Buffer
	status.Render(&b, s)
	for _, want := range []string{"RETENTION", "keeps events 90d · runs 180d · logs 30d", "last collection 2m", "1200 events, 7 runs, 3 notifications, 7 logs (3.0 MB)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, b.String())
		}
	}
	var m map[string]any
	raw, _ := json.Marshal(s)
	_ = json.Unmarshal(raw, &m)
	if r, ok := m["retention"].(map[string]any); !ok || r["last_gc"].(map[string]any)["log_bytes"] != float64(3<<20) {
		t.Errorf("JSON retention = %v", m["retention"])
	}
}

// runReads counts the runs a store hands out.
type runReads struct {
	store.Store
	n int
}

func (s *runReads) ListRuns(ctx context.Context, f store.RunFilter) ([]board.Run, error) {
	rs, err := s.Store.ListRuns(ctx, f)
	s.n += len(rs)
	return rs, err
}

// A snapshot reads today's runs (and a bounded few for the spend
// estimate), not the run history: on a store with a
// year of runs, status once read up to 5000 of them every time (issue 13
// item 14, found by drover bench history).
func TestSnapshotDoesNotReadTheRunHistory(t *testing.T) {
	st, cfg := statustest.Open(t)
	ctx := context.Background()
	now := time.Now().UTC()
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "old", State: "done", Spec: json.RawMessage(`{}`)}, "op")
	if err != nil {
		t.Fatal(err)
	}
	for a := 1; a <= 300; a++ {
		at := now.Add(-48*time.Hour - time.Duration(a)*time.Minute)
		r := board.Run{ID: fmt.Sprint("old-", a), CardID: c.ID, Attempt: a, RetryEpoch: 1, Outcome: board.OutcomeFailed, ClaimedAt: at, FinishedAt: &at}
		if err := st.Apply(ctx, store.Change{NewRun: &r}); err != nil {
			t.Fatal(err)
		}
	}
	spy := &runReads{Store: st}
	if _, err := status.Snapshot(ctx, spy, cfg, now); err != nil {
		t.Fatal(err)
	}
	// Under a day cap the spend estimate reads the last policy.RecentRuns
	// finished runs, a bound that does not grow with the history.
	if spy.n > policy.RecentRuns {
		t.Errorf("a snapshot read %d runs of past days, want at most %d", spy.n, policy.RecentRuns)
	}
}

// Status shows the day's spend, what the runs in flight reserve and the cap,
// and why new runs wait (issue 13, item 13): here the open $0.42 run
// reserves $0.58 more at a $1.00 estimate, and one more $1.00 run would pass
// the $1.50 cap.
func TestSpendShowsReserved(t *testing.T) {
	st, cfg := statustest.Open(t)
	now := time.Now().UTC()
	statustest.Seed(t, st, cfg, now)
	cfg.Limits.MaxCostPerDayUSD, cfg.Limits.EstimatedCostPerRunUSD = 1.5, 1
	s, err := status.Snapshot(context.Background(), st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	sp := s.Spend
	if sp.RunningToday != 1 || sp.ReservedUSD < 0.58-1e-9 || sp.ReservedUSD > 0.58+1e-9 || sp.EstimateUSD != 1 || sp.EstimateSource != "config" ||
		!sp.Paused || !strings.Contains(sp.Reason, "would pass the cap") || !sp.NextDayStart.After(now) {
		t.Fatalf("spend = %+v", sp)
	}
	var b bytes.Buffer
	status.Render(&b, s)
	for _, want := range []string{"of $1.50 per day", "reserved $0.58 for 1 run(s) in flight", "estimate per run $1.00 (config)", "DISPATCH PAUSED until"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, b.String())
		}
	}
	raw, _ := json.Marshal(s)
	var m struct {
		Spend map[string]any `json:"spend"`
	}
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"today_usd", "reserved_usd", "day_cap_usd", "estimate_usd", "reason", "next_day_start"} {
		if _, ok := m.Spend[k]; !ok {
			t.Errorf("status --json spend lacks %s: %s", k, raw)
		}
	}
}

// TestAttemptsNeverPassTheCap: interrupted runs do not spend max_attempts,
// so after them the running attempt's number can exceed the cap; status
// shows the counted figure against the cap ("6/5" before) and the attempt
// beside it.
func TestAttemptsNeverPassTheCap(t *testing.T) {
	st, cfg := statustest.Open(t) // max_attempts: 5
	ctx := context.Background()
	now := time.Now().UTC()
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "flaky node", State: "in_progress", Spec: json.RawMessage(`{}`)}, "op")
	if err != nil {
		t.Fatal(err)
	}
	for a := 1; a <= 6; a++ {
		at := now.Add(time.Duration(a-7) * time.Minute)
		r := board.Run{CardID: c.ID, Attempt: a, RetryEpoch: c.RetryEpoch, Agent: "sim", ClaimedAt: at, StartedAt: &at}
		if a < 6 {
			r.Outcome, r.Kind, r.FinishedAt, r.Counted = board.OutcomeInterrupted, "interrupted", &at, a == 5
		}
		if err := st.Apply(ctx, store.Change{NewRun: &r}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := status.Snapshot(ctx, st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Running) != 1 || s.Running[0].Attempt != 6 || s.Running[0].Counted != 1 {
		t.Fatalf("running = %+v", s.Running)
	}
	var b bytes.Buffer
	status.Render(&b, s)
	if out := b.String(); !strings.Contains(out, "2/5 (attempt 6)") || strings.Contains(out, "6/5") {
		t.Errorf("status shows the attempt past the cap:\n%s", out)
	}
}

// A running run's comments and progress notes are counted against the caps.
func TestAgentWritesCounted(t *testing.T) {
	st, cfg := statustest.Open(t)
	ctx := context.Background()
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "chatty", State: "ready", Spec: json.RawMessage(`{}`)}, "op")
	if err != nil {
		t.Fatal(err)
	}
	c, r := testkit.Claim(t, st, c, "n1", "sim")
	var evs []board.Event
	for i := range 3 {
		evs = append(evs, board.Event{CardID: c.ID, RunID: r.ID, Type: board.EvCommented, Actor: "agent:sim", Reason: fmt.Sprint("c", i)})
	}
	evs = append(evs, board.Event{CardID: c.ID, RunID: r.ID, Type: board.EvAgentProgress, Actor: "agent:sim", Reason: "p"},
		board.Event{CardID: c.ID, Type: board.EvCommented, Actor: "operator", Reason: "a person's"})
	if err := st.Apply(ctx, store.Change{Events: evs}); err != nil {
		t.Fatal(err)
	}
	s, err := status.Snapshot(ctx, st, cfg, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Running) != 1 || s.Running[0].AgentComments != 3 || s.Running[0].AgentProgress != 1 || s.AgentLimits.CommentsPerRun != cfg.Limits.AgentCommentsPerRun {
		t.Fatalf("running %+v, limits %+v; want 3 comments and 1 note against the caps", s.Running, s.AgentLimits)
	}
	var text strings.Builder
	status.Render(&text, s)
	if want := fmt.Sprintf("%s 3/%d comments, 1/%d notes", c.Identifier, cfg.Limits.AgentCommentsPerRun, cfg.Limits.AgentProgressPerRun); !strings.Contains(text.String(), want) {
		t.Fatalf("status text lacks %q:\n%s", want, text.String())
	}
}
