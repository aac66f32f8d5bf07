package metrics_test

import (
	"strconv"
	"testing"

	"github.com/drover-dev/drover/internal/metrics"
	"github.com/drover-dev/drover/internal/version"
)

func TestBuildInfo(t *testing.T) {
	m := metrics.New(nil, nil, nil)
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	in := version.Get()
	want := map[string]string{"version": in.Version, "commit": in.Commit, "goversion": in.GoVersion, "schema": strconv.FormatInt(in.Schema, 10)}
	for _, f := range fams {
		if f.GetName() != "drover_build_info" {
			continue
		}
		if len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
			t.Fatalf("drover_build_info = %v, want one series at 1", f.Metric)
		}
		got := map[string]string{}
		for _, lp := range f.Metric[0].Label {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("drover_build_info{%s} = %q, want %q", k, got[k], v)
			}
		}
		return
	}
	t.Fatal("no drover_build_info series")
}
