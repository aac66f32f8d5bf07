package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/bench"
)

// BenchmarkWakeUp measures how long a new card waits before a running
// dispatcher (SQLite store, sim agent) claims it: from calling CreateCard to
// the commit of the claim. Each iteration creates one card; the run it
// starts is finished outside the timer before the next.
//
//   - cross_process: a second store handle on the same file creates the card,
//     as `drover card create` in another process does; the dispatcher runs
//     with poll_interval 30s and must be woken by the store's Watch.
//   - in_process: the dispatcher's own store handle creates it.
//   - poll_only: like cross_process with the Watch switched off and
//     poll_interval 1s: what the latency would be without wake-ups (the
//     reference; expect about half the poll interval).
//
// Metrics: ms/claim (mean latency) and fraction_of_poll (ms/claim over the
// poll interval the dispatcher ran with). Wake-ups work when the first two
// show a tiny fraction_of_poll beside poll_only's ~0.5.
func BenchmarkWakeUp(b *testing.B) {
	for _, c := range []struct {
		path bench.WakePath
		poll time.Duration
	}{
		{bench.CrossProcess, 30 * time.Second},
		{bench.InProcess, 30 * time.Second},
		{bench.PollOnly, time.Second},
	} {
		b.Run(string(c.path), func(b *testing.B) {
			ctx := context.Background()
			w, err := bench.StartWaker(ctx, b.TempDir(), c.poll, c.path)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			if err := w.Settle(ctx); err != nil { // asleep, and on poll_only a random phase
				b.Fatal(err)
			}
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := w.Once(ctx)
				if err != nil {
					b.Fatal(err)
				}
				total += l
				b.StopTimer()
				if err := w.Settle(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			mean := total / time.Duration(b.N)
			b.ReportMetric(float64(mean)/float64(time.Millisecond), "ms/claim")
			b.ReportMetric(float64(mean)/float64(c.poll), "fraction_of_poll")
		})
	}
}
