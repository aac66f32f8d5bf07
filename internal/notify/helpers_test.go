package notify_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// received is one request a test receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// receiver is an HTTP server on 127.0.0.1 that answers with the queued
// statuses (then 200) and records every request.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{Header: req.Header.Clone(), Body: body})
		code := http.StatusOK
		if len(r.statuses) > 0 {
			code, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, http.StatusText(code))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), "sqlite:"+t.TempDir()+"/d.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

const secret = "s3cret"

func notifyConfig(slack, webhook string) config.Notify {
	return config.Notify{
		Slack:        config.Slack{URL: slack},
		Webhook:      config.Webhook{URL: webhook, Secret: secret},
		AllowPrivate: true,
	}
}

func newWorker(st store.Store, cfg config.Notify, clk *clock) *notify.Worker {
	return &notify.Worker{Store: st, Config: func() config.Notify { return cfg }, Now: clk.Now}
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

func enqueue(t *testing.T, st store.Store, cfg config.Notify, m notify.Message) int {
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
