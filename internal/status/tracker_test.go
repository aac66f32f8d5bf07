package status_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/status/statustest"
	"github.com/drover-dev/drover/internal/store"
)

// An external tracker's trouble shows in drover status: a projection not
// yet shown (retrying), the tracker unreachable, and a refused write.
func TestTrackerTroubleShows(t *testing.T) {
	st, cfg := statustest.Open(t)
	ctx := context.Background()
	now := time.Now().UTC()
	if err := st.Apply(ctx, store.Change{Outbox: []store.OutboxItem{{Key: "tracker/x/1", Channel: "tracker", Event: "claimed", Payload: json.RawMessage(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	rows, _ := st.ListOutbox(ctx, store.OutboxFilter{})
	if err := st.MarkOutbox(ctx, rows[0].ID, store.OutboxResult{At: now, NextAt: now.Add(time.Minute), Error: "tracker is unavailable: 503"}); err != nil {
		t.Fatal(err)
	}
	nodeStatus, _ := json.Marshal(map[string]any{"tracker_error": "github: the tracker is unavailable: 503", "tracker_error_since": now.Format(time.RFC3339Nano),
		"tracker_refused": "github refused showing the move to blocked of DRV-2: 422"})
	if err := st.TouchNode(ctx, store.Node{Name: "n1", PID: 1, StartedAt: now, SeenAt: now, Status: nodeStatus, Instance: "i", LeaseUntil: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	s, err := status.Snapshot(ctx, st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range s.Errors {
		got[e.Code] = e.Message
	}
	if !strings.Contains(got["projection_failing"], "not shown in the tracker") || !strings.Contains(got["tracker_error"], "503") || !strings.Contains(got["tracker_refused"], "DRV-2") {
		t.Fatalf("errors = %+v", s.Errors)
	}
}

// An issue whose data the sync could not take shows as a tracker_fault
// naming the issue, its card, the comment and the reason, one per fault.
func TestTrackerFaultsShow(t *testing.T) {
	st, cfg := statustest.Open(t)
	ctx := context.Background()
	now := time.Now().UTC()
	nodeStatus, _ := json.Marshal(map[string]any{"tracker_faults": []map[string]any{
		{"issue": "acme/app#3", "card": "DRV-3", "comment": "1001", "stage": "answer", "reason": "the comment 1001 by bob on acme/app#3 is not taken as the answer: is too long", "since": now.Format(time.RFC3339Nano)},
		{"issue": "acme/app#9", "stage": "read", "reason": "GitHub's answer for it does not decode", "since": now.Format(time.RFC3339Nano)},
	}})
	if err := st.TouchNode(ctx, store.Node{Name: "n1", PID: 1, StartedAt: now, SeenAt: now, Status: nodeStatus, Instance: "i", LeaseUntil: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	s, err := status.Snapshot(ctx, st, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []status.Error
	for _, e := range s.Errors {
		if e.Code == "tracker_fault" {
			got = append(got, e)
		}
	}
	if len(got) != 2 || got[0].Card != "DRV-3" || got[0].Message != "acme/app#3 (DRV-3), comment 1001: the comment 1001 by bob on acme/app#3 is not taken as the answer: is too long" ||
		got[0].Since == nil || got[1].Card != "" || !strings.HasPrefix(got[1].Message, "acme/app#9: ") {
		t.Fatalf("tracker faults = %+v", got)
	}
	var text strings.Builder
	status.Render(&text, s)
	if !strings.Contains(text.String(), "tracker_fault [node:n1]: acme/app#3 (DRV-3), comment 1001:") {
		t.Fatalf("drover status does not show the fault:\n%s", text.String())
	}
}
