package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestGiveUpDeliversOneSlackAndOneSignedWebhook(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	slack, hook := testkit.NewReceiver(t), testkit.NewReceiver(t)
	cfg := notifyConfig(slack.URL, hook.URL)
	clk := testkit.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	m := gaveUp(clk.Now())

	if n := enqueue(t, st, cfg, m); n != 2 {
		t.Fatalf("Enqueue made %d rows, want 2 (slack, webhook)", n)
	}
	if d, f := tick(t, newWorker(st, cfg, clk)); d != 2 || f != 0 {
		t.Fatalf("Tick delivered %d, failed %d; want 2, 0", d, f)
	}

	sr := slack.Requests("")
	if len(sr) != 1 {
		t.Fatalf("slack got %d requests, want 1", len(sr))
	}
	var sp struct {
		Text   string            `json:"text"`
		Blocks []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(sr[0].Body, &sp); err != nil {
		t.Fatalf("slack body is not JSON: %v", err)
	}
	all := string(sr[0].Body)
	for _, want := range []string{"DRV-7", "Fix the login page", "tests failed", "card DRV-7, run r3", "drover card resume DRV-7", "c7/r3/gave_up/slack"} {
		if !strings.Contains(all, want) {
			t.Errorf("slack body lacks %q: %s", want, all)
		}
	}
	if !strings.Contains(sp.Text, "gave up after 10 attempts") || len(sp.Blocks) < 3 {
		t.Errorf("slack text %q with %d blocks", sp.Text, len(sp.Blocks))
	}

	hr := hook.Requests("")
	if len(hr) != 1 {
		t.Fatalf("webhook got %d requests, want 1", len(hr))
	}
	h := hr[0]
	ts := h.Header.Get(notify.HeaderTimestamp)
	if ts != strconv.FormatInt(clk.Now().Unix(), 10) {
		t.Errorf("timestamp %q, want the worker clock's unix seconds", ts)
	}
	if !notify.VerifySignature(secret, ts, h.Body, h.Header.Get(notify.HeaderSignature)) {
		t.Errorf("signature %q does not verify", h.Header.Get(notify.HeaderSignature))
	}
	if notify.VerifySignature("wrong", ts, h.Body, h.Header.Get(notify.HeaderSignature)) {
		t.Error("signature verifies under the wrong secret")
	}
	if h.Header.Get(notify.HeaderEvent) != "gave_up" || h.Header.Get(notify.HeaderDelivery) != "c7/r3/gave_up/webhook" {
		t.Errorf("headers event=%q delivery=%q", h.Header.Get(notify.HeaderEvent), h.Header.Get(notify.HeaderDelivery))
	}
	var body struct {
		notify.Message
		IdempotencyKey string `json:"idempotency_key"`
	}
	if err := json.Unmarshal(h.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Event != "gave_up" || body.IdempotencyKey != "c7/r3/gave_up/webhook" || body.Card.Identifier != "DRV-7" ||
		body.GaveUp == nil || body.GaveUp.Attempts != 10 || body.Reason.How != "drover card resume DRV-7" || body.Run.Attempt != 10 {
		t.Errorf("webhook body: %s", h.Body)
	}

	pending, dead, lastErr, err := notify.Status(context.Background(), st)
	if err != nil || pending != 0 || dead != 0 || lastErr != "" {
		t.Errorf("Status = %d, %d, %q, %v; want all clear", pending, dead, lastErr, err)
	}
}

func TestSameMessageTwiceIsDeliveredOncePerChannel(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	slack, hook := testkit.NewReceiver(t), testkit.NewReceiver(t)
	cfg := notifyConfig(slack.URL, hook.URL)
	clk := testkit.NewClock(time.Now())
	w := newWorker(st, cfg, clk)

	enqueue(t, st, cfg, gaveUp(clk.Now()))
	tick(t, w)
	// Routing repeated (a crash between the write and the ack): same key.
	enqueue(t, st, cfg, gaveUp(clk.Now().Add(time.Second)))
	clk.Set(clk.Now().Add(time.Minute))
	tick(t, w)

	if len(slack.Requests("")) != 1 || len(hook.Requests("")) != 1 {
		t.Fatalf("slack got %d, webhook %d requests; want 1 each", len(slack.Requests("")), len(hook.Requests("")))
	}
}

func TestRestartedWorkerDeliversExactlyOnce(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	slack, hook := testkit.NewReceiver(t), testkit.NewReceiver(t)
	cfg := notifyConfig(slack.URL, hook.URL)
	clk := testkit.NewClock(time.Now())

	enqueue(t, st, cfg, gaveUp(clk.Now()))
	_ = newWorker(st, cfg, clk) // the first process dies before delivering

	w := newWorker(st, cfg, clk) // a new process, same store
	w.Node, w.LeaderTTL = "node-b", time.Minute
	if d, _ := tick(t, w); d != 2 {
		t.Fatalf("restarted worker delivered %d, want 2", d)
	}
	if d, _ := tick(t, newWorker(st, cfg, clk)); d != 0 {
		t.Fatalf("a third worker delivered %d again", d)
	}
	if len(slack.Requests("")) != 1 || len(hook.Requests("")) != 1 {
		t.Fatalf("slack got %d, webhook %d requests; want 1 each", len(slack.Requests("")), len(hook.Requests("")))
	}
}

func TestFailingReceiverIsRetriedWithBackoffThenSucceeds(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	hook.FailNext(2, 500)
	cfg := notifyConfig("", hook.URL)
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := testkit.NewClock(start)
	w := newWorker(st, cfg, clk)
	enqueue(t, st, cfg, gaveUp(start))

	var waits []time.Duration
	for try := 1; try <= 3; try++ {
		d, f := tick(t, w)
		if try < 3 && (d != 0 || f != 1) || try == 3 && d != 1 {
			t.Fatalf("try %d: delivered %d, failed %d", try, d, f)
		}
		if d, _ := tick(t, w); d != 0 || len(hook.Requests("")) != try {
			t.Fatalf("try %d: an immediate second tick tried again (%d requests)", try, len(hook.Requests("")))
		}
		if try == 3 {
			break
		}
		row := outboxRow(t, st)
		if row.Attempts != try || !strings.Contains(row.LastError, "500") || strings.Contains(row.LastError, hook.URL) {
			t.Fatalf("after try %d: attempts %d, last_error %q", try, row.Attempts, row.LastError)
		}
		if p, _, lastErr, _ := notify.Status(context.Background(), st); p != 1 || !strings.Contains(lastErr, "webhook gave_up (card c7)") {
			t.Errorf("Status while failing: pending %d, last error %q", p, lastErr)
		}
		waits = append(waits, row.NextAt.Sub(clk.Now()))
		clk.Set(row.NextAt.Add(-time.Millisecond))
		if d, f := tick(t, w); d+f != 0 {
			t.Fatalf("tried before the backoff ended")
		}
		clk.Set(row.NextAt)
	}
	if waits[0] < 5*time.Second || waits[0] > 6*time.Second || waits[1] < 10*time.Second || waits[1] > 11*time.Second {
		t.Errorf("backoff waits %v, want ~5s then ~10s", waits)
	}
	if row := outboxRow(t, st); row.DeliveredAt == nil || row.Attempts != 3 {
		t.Errorf("row after success: %+v", row)
	}
}

func TestDeadAfterMaxAttempts(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	hook.FailNext(3, 503)
	cfg := notifyConfig(hook.URL, hook.URL)
	clk := testkit.NewClock(time.Now())
	w := newWorker(st, cfg, clk)
	w.MaxAttempts = 2
	enqueue(t, st, notifyConfig("", hook.URL), gaveUp(clk.Now()))
	for range 2 {
		tick(t, w)
		clk.Set(clk.Now().Add(time.Hour))
	}
	pending, dead, _, err := notify.Status(context.Background(), st)
	if err != nil || pending != 0 || dead != 1 {
		t.Fatalf("Status = pending %d, dead %d, %v; want 0, 1", pending, dead, err)
	}
	if n := len(hook.Requests("")); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
}

// A channel whose URL is removed for a while keeps its pending rows: they
// wait (spending no attempts) and are delivered once it is configured again
// (issue 13, item 10).
func TestRemovedChannelWaitsThenDelivers(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	cfg := notifyConfig("", hook.URL)
	clk := testkit.NewClock(time.Now())
	w := newWorker(st, cfg, clk)
	w.MaxAttempts = 2
	enqueue(t, st, cfg, gaveUp(clk.Now()))
	off := cfg
	off.Webhook.URL = ""
	w.Config = func() notify.Config { return off }
	for range 5 {
		tick(t, w)
		clk.Set(clk.Now().Add(time.Hour))
	}
	row := outboxRow(t, st)
	if row.Dead || row.DeliveredAt != nil || row.Attempts != 0 || !strings.HasPrefix(row.LastError, notify.WaitingPrefix) ||
		!strings.Contains(row.LastError, "notify.webhook.url") {
		t.Fatalf("while unconfigured the row must wait, unspent: %+v", row)
	}
	w.Config = func() notify.Config { return cfg }
	tick(t, w)
	if row := outboxRow(t, st); row.DeliveredAt == nil {
		t.Fatalf("configured again, the row was not delivered: %+v", row)
	}
	if n := len(hook.Requests("")); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

func outboxRow(t *testing.T, st store.Store) store.OutboxItem {
	t.Helper()
	rows, err := st.ListOutbox(context.Background(), store.OutboxFilter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("outbox rows %d, %v", len(rows), err)
	}
	return rows[0]
}

func TestOnlyTheLeaderDelivers(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	cfg := notifyConfig("", hook.URL)
	clk := testkit.NewClock(time.Now())
	a, b := newWorker(st, cfg, clk), newWorker(st, cfg, clk)
	a.Node, b.Node = "node-a", "node-b"
	a.LeaderTTL, b.LeaderTTL = time.Minute, time.Minute
	if ok, err := st.TryLead(context.Background(), "node-a", time.Minute); err != nil || !ok {
		t.Fatalf("node-a could not lead: %v", err)
	}
	enqueue(t, st, cfg, gaveUp(clk.Now()))
	if d, f := tick(t, b); d+f != 0 {
		t.Fatalf("a follower delivered %d, failed %d", d, f)
	}
	if d, _ := tick(t, a); d != 1 {
		t.Fatalf("the leader delivered %d, want 1", d)
	}
}

func TestRunDeliversUntilCancelled(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	cfg := notifyConfig("", hook.URL)
	w := &notify.Worker{Store: st, Config: func() notify.Config { return cfg }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, 10*time.Millisecond); close(done) }()
	enqueue(t, st, cfg, gaveUp(time.Now()))
	deadline := time.Now().Add(5 * time.Second)
	for len(hook.Requests("")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if n := len(hook.Requests("")); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

// A receiver that answers later than the delivery timeout gets the same
// notification again with the same delivery key: delivery is at-least-once,
// and the key is how a receiver drops the copy (docs/multi-process.md).
func TestSlowReceiverGetsTheSameKeyAgain(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	var mu sync.Mutex
	var keys []string
	slow := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(notify.HeaderDelivery))
		first := len(keys) == 1
		mu.Unlock()
		if first {
			<-slow // answers only after the worker gave up waiting
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer hook.Close()
	defer close(slow)
	cfg := notifyConfig("", hook.URL)
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := testkit.NewClock(start)
	w := newWorker(st, cfg, clk)
	w.Client = &http.Client{Timeout: 200 * time.Millisecond}
	enqueue(t, st, cfg, gaveUp(start))

	if d, f := tick(t, w); d != 0 || f != 1 {
		t.Fatalf("first try against a slow receiver: delivered %d, failed %d; want a failed try", d, f)
	}
	clk.Set(outboxRow(t, st).NextAt)
	if d, _ := tick(t, w); d != 1 {
		t.Fatalf("the retry was not delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("delivery keys %q, want the same non-empty key twice", keys)
	}
}
