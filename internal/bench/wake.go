package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// WakePath says who creates the card a Waker measures and what wakes the
// dispatcher.
type WakePath string

// The paths a Waker can measure.
const (
	// CrossProcess: a second store handle on the same SQLite file creates
	// the card, as `drover card create` in another process would; the
	// dispatcher notices the commit through the store's Watch.
	CrossProcess WakePath = "cross_process"
	// InProcess: the dispatcher's own store handle creates the card.
	InProcess WakePath = "in_process"
	// OtherProcess: a separate drover process (`drover card add`) creates
	// the card; the latency runs from the card's created_at (set by that
	// process before its insert, in milliseconds) to the claim's commit.
	OtherProcess WakePath = "other_process"
	// PollOnly: like CrossProcess with the store's Watch switched off, so
	// only the poll interval wakes the dispatcher (the reference).
	PollOnly WakePath = "poll_only"
)

// Waker is a dispatcher on a scratch SQLite store that measures how long a
// new card waits to be claimed.
type Waker struct {
	Poll    time.Duration
	path    WakePath
	r       *rig
	creator store.Store
	// bin is the drover binary that creates OtherProcess cards.
	bin     string
	cleanup func()

	mu      sync.Mutex
	claims  map[string]time.Time
	routed  map[string]bool
	changed chan struct{}
}

// StartWaker starts a dispatcher with poll interval poll on a SQLite store
// in a scratch directory under dir ("" = the system's temp dir) and waits
// for its first tick.
func StartWaker(ctx context.Context, dir string, poll time.Duration, path WakePath) (*Waker, error) {
	w := &Waker{Poll: poll, path: path, claims: map[string]time.Time{}, routed: map[string]bool{}, changed: make(chan struct{}, 1)}
	scratch, cleanup, err := tempDir(dir)
	if err != nil {
		return nil, err
	}
	w.cleanup = cleanup
	obs := &observed{noWatch: path == PollOnly,
		claimed: func(id string, at time.Time) { w.note(func() { w.claims[id] = at }) },
		routed:  func(id string, _ time.Time) { w.note(func() { w.routed[id] = true }) },
	}
	if w.r, err = startRig(ctx, sqliteIn(scratch), scratch, "bench", poll, 4, obs); err != nil {
		cleanup()
		return nil, err
	}
	w.creator = w.r.st
	if path != InProcess && path != OtherProcess {
		other, err := sqlstore.Open(ctx, w.r.dsn)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.creator = other
	}
	if err := w.r.run(ctx, firstTickLimit); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// note records a claim or a routing and wakes whoever waits for one.
func (w *Waker) note(record func()) {
	w.mu.Lock()
	record()
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Once creates a card and returns the time from calling CreateCard (its
// commit included) to the commit of the card's claim. The run it starts is
// left running; call Settle before the next Once for an idle dispatcher.
func (w *Waker) Once(ctx context.Context) (time.Duration, error) {
	if w.path == OtherProcess {
		return w.onceProcess(ctx)
	}
	start := time.Now()
	c, err := createSim(ctx, w.creator, "wake-up")
	if err != nil {
		return 0, err
	}
	at, err := w.wait(ctx, c.ID, 3*w.Poll+30*time.Second)
	if err != nil {
		return 0, err
	}
	return at.Sub(start), nil
}

// StartProcessWaker is StartWaker on the OtherProcess path: bin is the
// drover binary whose `card add` creates each card.
func StartProcessWaker(ctx context.Context, dir string, poll time.Duration, bin string) (*Waker, error) {
	if bin == "" {
		return nil, errors.New("bench: other_process needs the drover binary")
	}
	w, err := StartWaker(ctx, dir, poll, OtherProcess)
	if err != nil {
		return nil, err
	}
	w.bin = bin
	return w, nil
}

// onceProcess runs `drover card add` in a process of its own and times the
// card from its created_at to its claim.
func (w *Waker) onceProcess(ctx context.Context) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, w.bin, "--config", filepath.Join(w.r.dir, "WORKFLOW.md"), "--store", w.r.dsn, "--json",
		"card", "add", "--title", "wake-up", "--state", "ready", "--spec", simSpec)
	cmd.Env = append(os.Environ(), "DROVER_STORE=")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return 0, fmt.Errorf("bench: %s card add: %v: %s", w.bin, err, stderr)
	}
	var c struct {
		ID        string    `json:"id"`
		CreatedAt time.Time `json:"created_at"`
	}
	if err := json.Unmarshal(out, &c); err != nil || c.ID == "" {
		return 0, fmt.Errorf("bench: %s card add printed %q, not a card: %v", w.bin, out, err)
	}
	at, err := w.wait(ctx, c.ID, 3*w.Poll+30*time.Second)
	if err != nil {
		return 0, err
	}
	return at.Sub(c.CreatedAt), nil
}

// quiet is how long the dispatcher must go without a tick before Settle
// calls it asleep: its own wake-ups (a finished run, its own writes) come
// within a few milliseconds.
const quiet = 50 * time.Millisecond

// Settle waits until every claimed run has been routed, no agent runs and
// the dispatcher has gone back to sleep, so that only the next card can wake
// it. On PollOnly it then waits a random share of the poll interval, so that
// the next card arrives at a random point of the interval rather than
// always just after a tick.
func (w *Waker) Settle(ctx context.Context) error {
	if err := w.settle(ctx); err != nil {
		return err
	}
	if w.path == PollOnly {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(w.Poll)))):
		}
	}
	return nil
}

func (w *Waker) settle(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.mu.Lock()
		open := 0
		for id := range w.claims {
			if !w.routed[id] {
				open++
			}
		}
		w.mu.Unlock()
		sinceTick := time.Since(time.Unix(0, w.r.lastTick.Load()))
		if open == 0 && w.r.d.Running() == 0 && sinceTick >= quiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d runs still open after 30s", open)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.changed:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (w *Waker) wait(ctx context.Context, cardID string, limit time.Duration) (time.Time, error) {
	timeout := time.After(limit)
	for {
		w.mu.Lock()
		at, ok := w.claims[cardID]
		w.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-timeout:
			return time.Time{}, fmt.Errorf("bench: card %s not claimed within %s (poll interval %s)", cardID, limit, w.Poll)
		case <-w.changed:
		}
	}
}

// Close stops the dispatcher and removes the scratch store.
func (w *Waker) Close() error {
	var err error
	if w.creator != nil && w.r != nil && w.creator != store.Store(w.r.st) {
		err = w.creator.Close()
	}
	if w.r != nil {
		err = errors.Join(err, w.r.close())
	}
	w.cleanup()
	return err
}

// WakeStats summarises the latencies of one path.
type WakeStats struct {
	Path    WakePath `json:"path"`
	Samples int      `json:"samples"`
	// MeanMS, P50MS, P99MS and MaxMS are claim latencies in milliseconds
	// (percentiles by nearest rank: with fewer than 100 samples p99 is the
	// maximum).
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
	// PollMS is the poll interval the dispatcher ran with.
	PollMS float64 `json:"poll_interval_ms"`
	// FractionOfPoll is MeanMS / PollMS: how small a share of the poll
	// interval a new card waits.
	FractionOfPoll float64 `json:"fraction_of_poll"`
}

// Summarise turns latencies into WakeStats.
func Summarise(path WakePath, poll time.Duration, lat []time.Duration) WakeStats {
	s := WakeStats{Path: path, Samples: len(lat), PollMS: msOf(poll)}
	if len(lat) == 0 {
		return s
	}
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	s.MeanMS = msOf(sum / time.Duration(len(lat)))
	s.P50MS = msOf(sorted[len(sorted)/2])
	s.P99MS = msOf(percentile(sorted, 0.99))
	s.MaxMS = msOf(sorted[len(sorted)-1])
	s.FractionOfPoll = s.MeanMS / s.PollMS
	return s
}

// MeasureWake runs samples wake-ups on a fresh Waker and summarises them;
// bin is the drover binary of the OtherProcess path (unused on the others).
func MeasureWake(ctx context.Context, dir string, poll time.Duration, path WakePath, samples int, bin string) (WakeStats, error) {
	var w *Waker
	var err error
	if path == OtherProcess {
		w, err = StartProcessWaker(ctx, dir, poll, bin)
	} else {
		w, err = StartWaker(ctx, dir, poll, path)
	}
	if err != nil {
		return WakeStats{}, err
	}
	lat := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		err := w.Settle(ctx)
		var l time.Duration
		if err == nil {
			l, err = w.Once(ctx)
		}
		if err != nil {
			w.Close()
			return WakeStats{}, err
		}
		lat = append(lat, l)
	}
	return Summarise(path, poll, lat), w.Close()
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the nearest-rank percentile p (0..1] of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
