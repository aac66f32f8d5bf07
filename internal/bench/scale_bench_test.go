package bench

import (
	"context"
	"testing"
)

// Go benchmarks of the pieces that fit a b.N loop; each reports the figure
// its drover bench scenario prints.

func BenchmarkDispatchSQLite(b *testing.B) {
	for b.Loop() {
		st, err := MeasureDispatch(context.Background(), b.TempDir(), DispatchOptions{Cards: 200, Slots: 100})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(st.CardsPerS, "cards/s")
	}
}

func BenchmarkRecover1000(b *testing.B) {
	for b.Loop() {
		rs, err := MeasureRecover(context.Background(), b.TempDir(), "", 1000)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rs.WallMS, "ms/1000-runs")
	}
}
