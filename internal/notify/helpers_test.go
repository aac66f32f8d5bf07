package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

const secret = "s3cret"

func notifyConfig(slack, webhook string) notify.Config {
	return notify.Config{
		Slack:        notify.Slack{URL: slack},
		Webhook:      notify.Webhook{URL: webhook, Secret: secret},
		AllowPrivate: true,
	}
}

func newWorker(st store.Store, cfg notify.Config, clk *testkit.Clock) *notify.Worker {
	return &notify.Worker{Store: st, Config: func() notify.Config { return cfg }, Now: clk.Now}
}

// gaveUp is the message the dispatcher sends when DRV-7's budget ran out.
func gaveUp(at time.Time) notify.Message {
	card := board.Card{ID: "c7", Identifier: "DRV-7", Title: "Fix the login page", State: "blocked"}
	run := board.Run{ID: "r3", CardID: "c7", Attempt: 10, Kind: "agent_failed"}
	return notify.Message{
		Event: notify.EventGaveUp,
		Key:   notify.Key(card.ID, run.ID, "gave_up"),
		At:    at,
		Card:  notify.CardOf(card, ""),
		Run:   notify.RunOf(run),
		Reason: &board.BlockReason{Kind: "agent_failed", What: "agent_failed: tests failed",
			Where: "card DRV-7, run r3 (attempt 10)", How: "drover card resume DRV-7"},
		GaveUp: &board.GaveUp{RunID: "r3", Attempts: 10, Kind: "agent_failed", Reason: "tests failed", At: at},
		Agent:  "claude",
	}
}

func enqueue(t *testing.T, st store.Store, cfg notify.Config, m notify.Message) int {
	t.Helper()
	items := notify.Enqueue(cfg, m)
	if err := st.Apply(context.Background(), store.Change{Outbox: items}); err != nil {
		t.Fatal(err)
	}
	return len(items)
}

func tick(t *testing.T, w *notify.Worker) (int, int) {
	t.Helper()
	d, f, err := w.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d, f
}
