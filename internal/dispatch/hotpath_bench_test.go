package dispatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// BenchmarkBurnDown runs the real dispatcher (sim agent, zero delay, 100
// slots) over a board of N ready cards until every card has been claimed,
// run and routed, on SQLite and (with DROVER_TEST_POSTGRES_URL) PostgreSQL.
// It is the figure River's burn-down of no-op jobs is compared with. N is
// DROVER_BENCH_CARDS (default 2000); run it once per backend:
//
//	go test ./internal/dispatch -run '^$' -bench BurnDown -benchtime 1x -cpuprofile cpu.out
//
// Metrics: cards/s; cpu-µs/card (the process's CPU time over the
// burn-down, steadier than cards/s on a shared machine); per card, the
// store calls the dispatcher made (applies = write transactions, single or
// batched, reads = the read calls, beats = Heartbeat, progress =
// UpdateRunProgress). The board is created outside
// the timer.
func BenchmarkBurnDown(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("DROVER_BENCH_CARDS")); err == nil && v > 0 {
		n = v
	}
	for _, be := range testkit.Backends {
		b.Run(string(be), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				burnDown(b, be, n, 100)
			}
		})
	}
}

func burnDown(b *testing.B, be testkit.Backend, n, slots int) {
	b.StopTimer()
	ctx := context.Background()
	dir := b.TempDir()
	raw := testkit.Store(b, be)
	cfg := testkit.NewWorkflow().
		Set("dispatch", fmt.Sprintf("{node: bench, lease: 30s, poll_interval: 1h, max_concurrent: %d}", slots)).
		Set("workspace", fmt.Sprintf("{root: %q, cleanup: never}", filepath.Join(dir, "ws"))).
		Config(b, dir)
	spec := []byte(`{"sim": ["succeeded"], "sim_delay": "0s", "sim_cost_usd": 0}`)
	for i := 0; i < n; i++ {
		if _, err := raw.CreateCard(ctx, "BEN", board.Card{Title: fmt.Sprint("burn ", i), State: "ready", Spec: spec}, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	st := &counting{Store: raw, want: int64(n), all: make(chan struct{})}
	d, err := dispatch.New(dispatch.Options{Store: st, Config: cfg, LogDir: filepath.Join(dir, "logs"),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.StartTimer()
	start, cpu0 := time.Now(), cpuTime()
	go func() { done <- d.Run(rctx) }()
	select {
	case <-st.all:
	case err := <-done:
		b.Fatalf("dispatcher stopped: %v", err)
	case <-time.After(time.Duration(n)*10*time.Millisecond + time.Minute):
		counts, _ := raw.CountByState(ctx)
		b.Fatalf("%d of %d cards routed in time (board %v)", st.routed.Load(), n, counts)
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	cancel()
	<-done
	per := func(v *atomic.Int64) float64 { return float64(v.Load()) / float64(n) }
	b.ReportMetric(float64(n)/wall.Seconds(), "cards/s")
	// CPU per card (user and system, the whole process) holds still on a
	// busy machine, where cards/s does not.
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/card")
	b.ReportMetric(per(&st.applies), "applies/card")
	b.ReportMetric(per(&st.reads), "reads/card")
	b.ReportMetric(per(&st.beats), "beats/card")
	b.ReportMetric(per(&st.progress), "progress/card")
	b.StartTimer()
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// counting counts the store calls a dispatcher makes and closes all once
// want runs have been routed.
type counting struct {
	store.Store
	applies, reads, beats, progress, routed atomic.Int64
	want                                    int64
	all                                     chan struct{}
	once                                    sync.Once
}

func (c *counting) Apply(ctx context.Context, ch store.Change) error {
	c.applies.Add(1)
	err := c.Store.Apply(ctx, ch)
	if err == nil && ch.Run != nil && ch.Run.Outcome != "" {
		c.routedOne()
	}
	return err
}

func (c *counting) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	c.applies.Add(1)
	refused, err := c.Store.ApplyAll(ctx, chs)
	if err == nil {
		for i, ch := range chs {
			if refused[i] == nil && ch.Run != nil && ch.Run.Outcome != "" {
				c.routedOne()
			}
		}
	}
	return refused, err
}

func (c *counting) HeartbeatAll(ctx context.Context, owner string, epochs map[string]int64, until time.Time) ([]string, error) {
	c.beats.Add(1)
	return c.Store.HeartbeatAll(ctx, owner, epochs, until)
}

func (c *counting) routedOne() {
	if c.routed.Add(1) == c.want {
		c.once.Do(func() { close(c.all) })
	}
}

func (c *counting) GetCard(ctx context.Context, ref string) (board.Card, error) {
	c.reads.Add(1)
	return c.Store.GetCard(ctx, ref)
}

func (c *counting) ListCards(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	c.reads.Add(1)
	return c.Store.ListCards(ctx, f)
}

func (c *counting) GetRun(ctx context.Context, id string) (board.Run, error) {
	c.reads.Add(1)
	return c.Store.GetRun(ctx, id)
}

func (c *counting) ListRuns(ctx context.Context, f store.RunFilter) ([]board.Run, error) {
	c.reads.Add(1)
	return c.Store.ListRuns(ctx, f)
}

func (c *counting) ListAgentStates(ctx context.Context) ([]store.AgentState, error) {
	c.reads.Add(1)
	return c.Store.ListAgentStates(ctx)
}

func (c *counting) ListEvents(ctx context.Context, f store.EventFilter) ([]board.Event, error) {
	c.reads.Add(1)
	return c.Store.ListEvents(ctx, f)
}

func (c *counting) Heartbeat(ctx context.Context, cardID, owner string, epoch int64, until time.Time) error {
	c.beats.Add(1)
	return c.Store.Heartbeat(ctx, cardID, owner, epoch, until)
}

func (c *counting) UpdateRunProgress(ctx context.Context, runID string, p store.RunProgress) error {
	c.progress.Add(1)
	return c.Store.UpdateRunProgress(ctx, runID, p)
}
