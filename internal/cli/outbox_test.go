package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// A notification whose channel is not configured waits: status says so,
// drover outbox ls lists it, drover outbox drop gives it up (issue 13, item 10).
func TestOutboxWaitingListAndDrop(t *testing.T) {
	e := newEnv(t, "")
	st := testkit.Open(t, e.dsn)
	ctx := context.Background()
	card, err := st.CreateCard(ctx, "DRV", board.Card{Title: "waits for a channel", State: "backlog", Spec: json.RawMessage(`{}`)}, "test")
	if err != nil {
		t.Fatal(err)
	}
	rows := []store.OutboxItem{{Key: card.ID + "/r1/blocked/webhook", Channel: notify.ChannelWebhook, Event: "blocked", CardID: card.ID, RunID: "r1", Payload: json.RawMessage(`{"event":"blocked"}`)}}
	if err := st.Apply(ctx, store.Change{Outbox: rows}); err != nil {
		t.Fatal(err)
	}
	w := &notify.Worker{Store: st, Config: func() notify.Config { return notify.Config{} }}
	if _, _, err := w.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var state struct {
		Errors []struct{ Code, Message string } `json:"errors"`
	}
	e.okJSON(&state, "status")
	found := false
	for _, er := range state.Errors {
		found = found || er.Code == "notify_waiting" && strings.Contains(er.Message, "waiting for a channel")
	}
	if !found {
		t.Fatalf("status errors = %+v; want notify_waiting", state.Errors)
	}
	var items []store.OutboxItem
	e.okJSON(&items, "outbox", "ls")
	if len(items) != 1 || items[0].Dead || !strings.HasPrefix(items[0].LastError, notify.WaitingPrefix) {
		t.Fatalf("outbox ls = %+v", items)
	}
	if out := e.ok("outbox", "ls"); !strings.Contains(out, items[0].ID) || !strings.Contains(out, "waiting for a channel") || !strings.Contains(out, card.Identifier) {
		t.Fatalf("outbox ls text:\n%s", out)
	}
	e.fails(2, "outbox", "drop", "nope")
	if out := e.ok("outbox", "drop", items[0].ID); !strings.Contains(out, "dropped webhook notification blocked") {
		t.Fatalf("drop: %s", out)
	}
	e.okJSON(&items, "outbox", "ls")
	if len(items) != 0 {
		t.Fatalf("after drop, outbox ls = %+v", items)
	}
	if out := e.ok("events"); !strings.Contains(out, "notification_dropped") {
		t.Fatalf("the drop is not in the audit log:\n%s", out)
	}
}
