package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// Delivery defaults.
const (
	DefaultMaxAttempts = 20
	DefaultBaseBackoff = 5 * time.Second
	DefaultMaxBackoff  = 10 * time.Minute
	DefaultBatch       = 100
	DefaultLeaderTTL   = 30 * time.Second
	// WaitRecheck is how often a row waiting for an unconfigured channel is
	// looked at again.
	WaitRecheck = 30 * time.Second
)

// WaitingPrefix starts the last_error of a row that waits for its channel to
// be configured; status shows such rows as waiting, not failing.
const WaitingPrefix = "waiting for a channel: "

// Worker delivers due notification rows from the outbox. Tick is one pass;
// Run loops. Rows of other channels (tracker projections) are left alone.
//
// Several drover processes may share one store. With Node set, a Worker
// delivers only while Store.TryLead(Node, LeaderTTL) says this node leads
// (the same lease as the dispatcher's housekeeping), so two processes never
// deliver the same row at once. With Node empty the caller guarantees that
// one Worker runs per store.
type Worker struct {
	Store store.Store
	// Config returns the current notify section (hot reload: it is read on
	// every Tick). A row whose channel has no URL now waits for one (looked
	// at again every WaitRecheck), spending none of its attempts, until the
	// channel is configured again or an operator drops it.
	Config func() Config
	// Client sends the requests. Nil: NewClient(cfg.AllowPrivate), which
	// refuses private addresses at connect time unless allowed. A Client set
	// here is used as is.
	Client *http.Client
	Now    func() time.Time // nil: time.Now
	Log    *slog.Logger     // nil: slog.Default()

	Node      string
	LeaderTTL time.Duration // 0: DefaultLeaderTTL

	MaxAttempts int           // tries before a row is marked dead; 0: DefaultMaxAttempts
	BaseBackoff time.Duration // 0: DefaultBaseBackoff
	MaxBackoff  time.Duration // 0: DefaultMaxBackoff
	Batch       int           // rows per Tick; 0: DefaultBatch

	mu        sync.Mutex
	clients   [2]*http.Client // by allowPrivate
	leadUntil time.Time       // wall clock; TryLead is not asked again before it
}

// Tick delivers the rows due now. Each try is recorded with MarkOutbox:
// delivered on a 2xx answer; otherwise the error, and the next try after an
// exponential backoff with jitter (BaseBackoff × 2^(tries-1), at most
// MaxBackoff, plus up to 10%; a 429's Retry-After is honoured up to
// MaxBackoff), or dead after MaxAttempts tries. After a failure, the channel's
// other rows wait for the next Tick. err is a store error (or ctx's); delivery
// failures are counted in failed, never returned.
func (w *Worker) Tick(ctx context.Context) (delivered, failed int, err error) {
	if ok, err := w.lead(ctx); err != nil || !ok {
		return 0, 0, err
	}
	now := w.now()
	items, err := w.Store.DueOutbox(ctx, now, nz(w.Batch, DefaultBatch))
	if err != nil {
		return 0, 0, err
	}
	cfg := w.Config()
	down := map[string]bool{}
	for _, it := range items {
		if it.Channel != ChannelSlack && it.Channel != ChannelWebhook || down[it.Channel] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return delivered, failed, err
		}
		dctx, sp := tracing.StartDelivery(ctx, it)
		res, tried := w.deliver(dctx, cfg, it)
		tracing.Delivered(sp, res)
		if err := w.Store.MarkOutbox(ctx, it.ID, res); err != nil {
			return delivered, failed, fmt.Errorf("notify: recording delivery of %s: %w", it.Key, err)
		}
		log := w.log().With("card_id", it.CardID, "run_id", it.RunID, "channel", it.Channel, "event", it.Event, "key", it.Key, "attempt", it.Attempts+1)
		switch {
		case res.Delivered:
			delivered++
			log.Info("notification delivered")
		case res.Waiting:
			log.Warn("notification waits for its channel to be configured", "error", res.Error)
		case res.Dead:
			failed++
			down[it.Channel] = tried
			log.Error("notification dead: delivery abandoned", "error", res.Error)
		default:
			failed++
			down[it.Channel] = true
			log.Warn("notification delivery failed; will retry", "error", res.Error, "next_at", res.NextAt)
		}
	}
	return delivered, failed, nil
}

// Run calls Tick every interval (default 2s) and when the store changes,
// until ctx ends. Errors are logged.
func (w *Worker) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	changed := w.Store.Watch(ctx)
	for {
		if _, _, err := w.Tick(ctx); err != nil && ctx.Err() == nil {
			w.log().Error("notify: outbox tick failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case _, ok := <-changed:
			if !ok {
				changed = nil
			}
		}
	}
}

// lead reports whether this worker may deliver now. Leadership is asked at
// most every LeaderTTL/2; the lease lasts LeaderTTL, so a cached yes is safe.
func (w *Worker) lead(ctx context.Context) (bool, error) {
	if w.Node == "" {
		return true, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Now().Before(w.leadUntil) {
		return true, nil
	}
	ttl := w.LeaderTTL
	if ttl <= 0 {
		ttl = DefaultLeaderTTL
	}
	start := time.Now()
	ok, err := w.Store.TryLead(ctx, w.Node, ttl)
	if err != nil {
		return false, fmt.Errorf("notify: leadership: %w", err)
	}
	if ok {
		w.leadUntil = start.Add(ttl / 2)
	}
	return ok, nil
}

// deliver makes one try and says how to record it; tried is false when no
// request was sent (the row is unusable or its channel is gone).
func (w *Worker) deliver(ctx context.Context, cfg Config, it store.OutboxItem) (res store.OutboxResult, tried bool) {
	now := w.now()
	var m Message
	if err := json.Unmarshal(it.Payload, &m); err != nil {
		return store.OutboxResult{At: now, Dead: true, Error: "payload is not a notification message: " + err.Error()}, false
	}
	var (
		target, key string
		body        []byte
		err         error
		hdr         = http.Header{"Content-Type": {"application/json"}}
	)
	switch it.Channel {
	case ChannelSlack:
		target, key = cfg.Slack.URL, keySlackURL
		body, err = slackPayload(m, it.Key)
	case ChannelWebhook:
		target, key = cfg.Webhook.URL, keyWebhookURL
		body, err = webhookPayload(m, it.Key)
		ts := strconv.FormatInt(now.Unix(), 10)
		hdr.Set(HeaderEvent, it.Event)
		hdr.Set(HeaderDelivery, it.Key)
		hdr.Set(HeaderTimestamp, ts)
		if cfg.Webhook.Secret != "" {
			hdr.Set(HeaderSignature, Sign(cfg.Webhook.Secret, ts, body))
		}
	}
	if err != nil {
		return store.OutboxResult{At: now, Dead: true, Error: "cannot encode the message: " + err.Error()}, false
	}
	if target == "" {
		return store.OutboxResult{At: now, Waiting: true, NextAt: now.Add(WaitRecheck),
			Error: WaitingPrefix + key + " is not configured; set it to deliver this notification, or drop it with drover outbox drop " + it.ID}, false
	}
	retryAfter, err := w.post(ctx, cfg.AllowPrivate, key, target, hdr, body)
	if err == nil {
		return store.OutboxResult{Delivered: true, At: now}, true
	}
	return w.failure(it, now, err.Error(), retryAfter), true
}

// failure schedules the next try, or marks the row dead after MaxAttempts.
func (w *Worker) failure(it store.OutboxItem, now time.Time, msg string, retryAfter time.Duration) store.OutboxResult {
	tries := it.Attempts + 1
	r := Retry{MaxAttempts: w.MaxAttempts, BaseBackoff: w.BaseBackoff, MaxBackoff: w.MaxBackoff}
	if r.Dead(tries) {
		return store.OutboxResult{At: now, Dead: true, Error: fmt.Sprintf("%s (gave up after %d tries)", msg, tries)}
	}
	return store.OutboxResult{At: now, Error: msg, NextAt: now.Add(r.Backoff(tries, retryAfter))}
}

// Retry is how an outbox row is tried again (notifications here, tracker
// projections in tracker.Deliverer); a zero field takes its default.
type Retry struct {
	MaxAttempts int
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
}

// Dead reports whether a row that failed tries times is given up.
func (r Retry) Dead(tries int) bool { return tries >= nz(r.MaxAttempts, DefaultMaxAttempts) }

// Backoff is the wait after tries failed tries: the base doubled each
// try, at least retryAfter, at most the ceiling, and up to a tenth more.
func (r Retry) Backoff(tries int, retryAfter time.Duration) time.Duration {
	base, ceil := r.BaseBackoff, r.MaxBackoff
	if base <= 0 {
		base = DefaultBaseBackoff
	}
	if ceil <= 0 {
		ceil = DefaultMaxBackoff
	}
	d := base
	for i := 1; i < tries && d < ceil; i++ {
		d *= 2
	}
	d = min(max(d, retryAfter), ceil)
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

// post sends body and returns nil on a 2xx answer. Errors never contain the
// URL (it carries secrets).
func (w *Worker) post(ctx context.Context, allowPrivate bool, key, target string, hdr http.Header, body []byte) (time.Duration, error) {
	if _, err := parseTarget(key, target); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s: cannot build the request", key)
	}
	req.Header = hdr
	resp, err := w.client(allowPrivate).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, nil
	}
	var ra time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ra = time.Duration(s) * time.Second
	}
	msg := fmt.Sprintf("%s: receiver answered %s", key, resp.Status)
	if s := oneLine(string(snippet)); s != "" {
		msg += ": " + excerpt.Clip(s, 200)
	}
	return ra, errors.New(msg)
}

func (w *Worker) client(allowPrivate bool) *http.Client {
	if w.Client != nil {
		return w.Client
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	if allowPrivate {
		i = 1
	}
	if w.clients[i] == nil {
		w.clients[i] = NewClient(allowPrivate)
	}
	return w.clients[i]
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

func nz(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
