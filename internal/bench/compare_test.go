package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRiver writes a stand-in for bench/river that appends its arguments to
// log and prints a result line whose rate depends on the setting.
func fakeRiver(t *testing.T, log string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "river-bench")
	script := `#!/bin/sh
echo "$@" >> ` + log + `
jobs=0; setting=; backend=
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift;;
    --setting) setting=$2; shift;;
    --backend) backend=$2; shift;;
  esac
  shift
done
rate=100; workers=100
[ "$setting" = tuned ] && rate=400 && workers=2000
echo "some River log line"
echo "{\"tool\":\"river\",\"river_version\":\"v0.0.0-fake\",\"backend\":\"$backend\",\"setting\":\"$setting\",\"jobs\":$jobs,\"workers\":$workers,\"wall_s\":1,\"jobs_per_s\":$rate}"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Compare interleaves the three measurements of a backend (drover, River's
// two settings), rotating their order each round; its ratios are drover's
// median over River's.
func TestCompareInterleavesAndDivides(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	cs, err := Compare(ctx, CompareOptions{Backends: []Backend{{Name: "sqlite"}}, Jobs: 4, Slots: []int{2}, Rounds: 3, River: fakeRiver(t, log), Dir: t.TempDir(), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, l := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		f := strings.Fields(l)
		steps = append(steps, f[3]+" "+f[4])
	}
	if got, want := strings.Join(steps, ","), "drover slots=2,river tuned,river default,"+
		"river tuned,river default,drover slots=2,"+
		"river default,drover slots=2,river tuned"; got != want {
		t.Errorf("measurements in order %s, want %s", got, want)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	// Round 1: drover, tuned, default; round 2: tuned, default, drover;
	// round 3: default, drover, tuned.
	var settings []string
	for _, c := range calls {
		f := strings.Fields(c)
		for i := range f {
			if f[i] == "--setting" {
				settings = append(settings, f[i+1])
			}
		}
		if !strings.Contains(c, "--jobs 4") || !strings.Contains(c, "--backend sqlite") {
			t.Errorf("River called with %q, want --backend sqlite --jobs 4", c)
		}
	}
	if got, want := strings.Join(settings, ","), "tuned,default,tuned,default,default,tuned"; got != want {
		t.Errorf("River settings in call order %s, want %s", got, want)
	}
	if cs.RiverVersion != "v0.0.0-fake" || len(cs.Figures) != 3 || len(cs.Ratios) != 2 {
		t.Fatalf("stats %+v: want the fake's version, 3 figures and 2 ratios", cs)
	}
	var drover float64
	for _, f := range cs.Figures {
		if len(f.PerS) != 3 {
			t.Errorf("%s %s: %d samples, want 3", f.System, f.Setting, len(f.PerS))
		}
		if f.System == "drover" {
			drover = f.MedianPerS
			if f.Setting != "slots=2" || f.Workers != 2 {
				t.Errorf("drover figure %+v: want setting slots=2 and 2 workers", f)
			}
		}
	}
	for _, r := range cs.Ratios {
		want := map[string]float64{"tuned": 400, "default": 100}[r.Against]
		if r.River != want || r.Drover != drover || r.Ratio != drover/want {
			t.Errorf("ratio %+v: want drover %v / River %v", r, drover, want)
		}
	}
}

func TestRunRiverRefusesOtherOutput(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "river-bench")
	os.WriteFile(bin, []byte("#!/bin/sh\necho not json\n"), 0o755)
	if _, err := RunRiver(context.Background(), bin, Backend{Name: "sqlite"}, "tuned", 3, ""); err == nil || !strings.Contains(err.Error(), "JSON") {
		t.Errorf("non-JSON output: err %v, want one naming the JSON line", err)
	}
	os.WriteFile(bin, []byte("#!/bin/sh\necho boom >&2; exit 1\n"), 0o755)
	if _, err := RunRiver(context.Background(), bin, Backend{Name: "sqlite"}, "tuned", 3, ""); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failing binary: err %v, want its stderr", err)
	}
}

func TestFindRiverModule(t *testing.T) {
	wd, _ := os.Getwd()
	m, err := FindRiverModule(wd)
	if err != nil || !strings.HasSuffix(m, filepath.Join("bench", "river")) {
		t.Errorf("from %s: %q, %v; want this checkout's bench/river", wd, m, err)
	}
	if _, err := FindRiverModule(t.TempDir()); err == nil || !strings.Contains(err.Error(), "--river-bin") {
		t.Errorf("outside a checkout: %v, want an error naming --river-bin", err)
	}
}

func TestMedianAndPercentile(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{1, 5}, 3}, {[]float64{1, 2, 9}, 2}, {[]float64{1, 2, 3, 10}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, v := range n {
			d = append(d, time.Duration(v)*time.Millisecond)
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, c := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{ms(5), 0.99, 5 * time.Millisecond},
		{ms(1, 2, 3), 0.99, 3 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
	} {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("percentile(%d values, %v) = %v, want %v", len(c.in), c.p, got, c.want)
		}
	}
}

// Each of drover's slot settings is a figure of its own, divided by each of
// River's settings.
func TestCompareSeveralSlotSettings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := Compare(ctx, CompareOptions{Backends: []Backend{{Name: "sqlite"}}, Jobs: 4, Slots: []int{1, 3}, Rounds: 2,
		River: fakeRiver(t, filepath.Join(t.TempDir(), "calls")), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	drover := map[string]float64{}
	for _, f := range cs.Figures {
		if f.System == "drover" {
			drover[f.Setting] = f.MedianPerS
			if len(f.PerS) != 2 {
				t.Errorf("%s: %d samples, want 2", f.Setting, len(f.PerS))
			}
		}
	}
	if len(drover) != 2 || len(cs.Figures) != 4 || len(cs.Ratios) != 4 {
		t.Fatalf("figures %+v ratios %+v: want drover slots=1 and slots=3, River's two and four ratios", cs.Figures, cs.Ratios)
	}
	for _, r := range cs.Ratios {
		d, ok := drover[r.Setting]
		want := map[string]float64{"tuned": 400, "default": 100}[r.Against]
		if !ok || r.Drover != d || r.Ratio != d/want {
			t.Errorf("ratio %+v: want drover %s's median over River %s's", r, r.Setting, r.Against)
		}
	}
	if _, err := Compare(ctx, CompareOptions{Backends: []Backend{{Name: "sqlite"}}, Jobs: 4, Slots: []int{2, 0}, Rounds: 1, River: "x"}); err == nil {
		t.Error("slots 0 accepted")
	}
}
