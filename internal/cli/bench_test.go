package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/bench"
	"github.com/drover-dev/drover/internal/cli"
	"github.com/drover-dev/drover/internal/testkit"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cli.Main(args, &out, &errw)
	return code, out.String(), errw.String()
}

// benchJSON runs a scenario with a tiny N and checks that its JSON has the
// keys scripts rely on, with positive numbers where a rate or a time is due.
func benchJSON(t *testing.T, args []string, positive []string, other ...string) map[string]any {
	t.Helper()
	code, out, errw := runCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("drover %s: exit %d, stderr %s", strings.Join(args, " "), code, errw)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, k := range positive {
		v, ok := got[k].(float64)
		if !ok || v <= 0 {
			t.Errorf("key %q = %v, want a positive number\n%s", k, got[k], out)
		}
	}
	for _, k := range other {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing\n%s", k, out)
		}
	}
	return got
}

func TestBenchStore(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "WORKFLOW.md") // absent: defaults
	got := benchJSON(t, []string{"--config", cfg, "--store", "sqlite:" + filepath.Join(dir, "board", "drover.db"), "bench", "store", "--cards", "20"},
		[]string{"cards", "create_ops_per_s", "list_ops_per_s", "list_full_scan_ops_per_s", "index_speedup", "list_limit"},
		"scenario", "backend", "list_state")
	if got["scenario"] != "store" || got["backend"] != "sqlite" || got["cards"] != 20.0 {
		t.Errorf("scenario/backend/cards = %v/%v/%v", got["scenario"], got["backend"], got["cards"])
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(m) != 0 {
		t.Errorf("the scratch store was left behind: %v", m)
	}
}

func TestBenchStorePostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	got := benchJSON(t, []string{"--config", filepath.Join(t.TempDir(), "WORKFLOW.md"), "--store", dsn, "bench", "store", "--cards", "20"},
		[]string{"create_ops_per_s", "list_ops_per_s", "list_full_scan_ops_per_s", "index_speedup"}, "backend")
	if got["backend"] != "postgres" {
		t.Errorf("backend = %v, want postgres", got["backend"])
	}
}

func TestBenchWakeup(t *testing.T) {
	got := benchJSON(t, []string{"bench", "wakeup", "--cards", "2", "--drover-bin", testkit.Binary(t)}, []string{"poll_interval_ms", "samples"},
		"scenario", string(bench.OtherProcess), string(bench.CrossProcess), string(bench.InProcess))
	for _, p := range []bench.WakePath{bench.OtherProcess, bench.CrossProcess, bench.InProcess} {
		st, _ := got[string(p)].(map[string]any)
		for _, k := range []string{"mean_ms", "p50_ms", "p99_ms", "max_ms", "poll_interval_ms", "fraction_of_poll"} {
			if v, ok := st[k].(float64); !ok || v <= 0 {
				t.Errorf("%s.%s = %v, want a positive number", p, k, st[k])
			}
		}
		// A claim that waited for the poll would be a fraction near 1.
		if f, _ := st["fraction_of_poll"].(float64); f >= 0.5 {
			t.Errorf("%s: fraction_of_poll %v: the card waited for the poll, not a wake-up", p, f)
		}
	}
}

func TestBenchDispatch(t *testing.T) {
	got := benchJSON(t, []string{"bench", "dispatch", "--cards", "4", "--slots", "2"},
		[]string{"cards", "slots", "wall_ms", "cards_per_s", "per_card_ms", "ideal_ms", "wall_vs_ideal"}, "scenario")
	if got["cards"] != 4.0 || got["slots"] != 2.0 {
		t.Errorf("cards/slots = %v/%v, want 4/2", got["cards"], got["slots"])
	}
}

// dispatch on PostgreSQL: the cards go through several dispatchers sharing
// a scratch schema, which is dropped after.
func TestBenchDispatchPostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	got := benchJSON(t, []string{"bench", "dispatch", "--backend", "postgres", "--dsn", dsn, "--cards", "6", "--slots", "2", "--nodes", "2"},
		[]string{"cards", "slots", "nodes", "wall_ms", "cards_per_s", "per_card_ms", "ideal_ms", "wall_vs_ideal"}, "scenario")
	if got["backend"] != "postgres" || got["nodes"] != 2.0 || got["cards"] != 6.0 {
		t.Errorf("backend/nodes/cards = %v/%v/%v, want postgres/2/6", got["backend"], got["nodes"], got["cards"])
	}
}

// INTERFACES.md: drover bench dispatch --store DSN runs on that backend.
func TestBenchDispatchStorePostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	got := benchJSON(t, []string{"bench", "dispatch", "--store", dsn, "--cards", "3", "--slots", "2"}, []string{"cards_per_s"}, "scenario")
	if got["backend"] != "postgres" {
		t.Errorf("backend = %v, want postgres", got["backend"])
	}
}

func TestBenchDispatchNodes(t *testing.T) {
	got := benchJSON(t, []string{"bench", "dispatch", "--cards", "6", "--slots", "1", "--nodes", "3"},
		[]string{"cards_per_s", "ideal_ms"}, "scenario")
	if got["backend"] != "sqlite" || got["nodes"] != 3.0 {
		t.Errorf("backend/nodes = %v/%v, want sqlite/3", got["backend"], got["nodes"])
	}
}

// compare builds bench/river from this checkout, runs River in both
// settings and drover on a tiny size, and reports every figure and the
// ratios (what they are is the benchmark's business, not the test's).
func TestBenchCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bench/river")
	}
	args := []string{"bench", "compare", "--cards", "5", "--rounds", "2", "--slots", "2"}
	backends := []string{"sqlite"}
	if dsn := os.Getenv("DROVER_TEST_POSTGRES_URL"); dsn != "" {
		args = append(args, "--dsn", dsn)
		backends = append(backends, "postgres")
	}
	got := benchJSON(t, args, []string{"jobs", "rounds"}, "river_version", "figures", "ratios", "slots")
	figs, _ := got["figures"].([]any)
	if len(figs) != 3*len(backends) {
		t.Fatalf("%d figures, want 3 per backend (%v): %v", len(figs), backends, figs)
	}
	for _, fv := range figs {
		f, _ := fv.(map[string]any)
		per, _ := f["per_s"].([]any)
		if len(per) != 2 {
			t.Errorf("%v: %d samples, want one per round (2)", f, len(per))
		}
		for _, k := range []string{"median_per_s", "min_per_s", "max_per_s", "workers"} {
			if v, ok := f[k].(float64); !ok || v <= 0 {
				t.Errorf("%v/%v/%v: %s = %v, want a positive number", f["backend"], f["system"], f["setting"], k, f[k])
			}
		}
	}
	ratios, _ := got["ratios"].([]any)
	seen := map[string]bool{}
	for _, rv := range ratios {
		r, _ := rv.(map[string]any)
		seen[fmt.Sprint(r["backend"], "/", r["against"])] = true
		d, _ := r["drover_per_s"].(float64)
		rr, _ := r["river_per_s"].(float64)
		if ratio, _ := r["ratio"].(float64); rr <= 0 || math.Abs(ratio-d/rr) > 1e-9*ratio {
			t.Errorf("ratio %v is not drover_per_s / river_per_s", r)
		}
	}
	for _, b := range backends {
		for _, s := range bench.RiverSettings {
			if !seen[b+"/"+s] {
				t.Errorf("no ratio of drover against River %s on %s: %v", s, b, ratios)
			}
		}
	}
}

func TestBenchBackendUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "dispatch", "--backend", "postgres"},
		{"bench", "dispatch", "--backend", "mysql"},
		{"bench", "dispatch", "--backend", "sqlite,sqlite"},
		{"bench", "dispatch", "--dsn", "sqlite:/tmp/x.db", "--backend", "postgres"},
		{"bench", "dispatch", "--nodes", "0"},
		{"bench", "compare", "--rounds", "0"},
		{"bench", "dispatch", "--backend", "sqlite,postgres", "--dsn", "postgres://u@127.0.0.1:1/x"},
	} {
		code, _, errw := runCLI(t, args...)
		if code != cli.ExitInvalid || !strings.Contains(errw, "--") {
			t.Errorf("drover %s: exit %d, stderr %q; want exit %d naming the flag", strings.Join(args, " "), code, errw, cli.ExitInvalid)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	code, _, errw := runCLI(t, "bench", "nope")
	if code != cli.ExitInvalid {
		t.Errorf("unknown scenario: exit %d, want %d", code, cli.ExitInvalid)
	}
	for _, s := range bench.Scenarios {
		if !strings.Contains(errw, s) {
			t.Errorf("unknown scenario: stderr %q does not name %q", errw, s)
		}
	}
	if code, _, _ := runCLI(t, "bench"); code != cli.ExitInvalid {
		t.Errorf("no scenario: exit %d, want %d", code, cli.ExitInvalid)
	}
	if code, _, _ := runCLI(t, "bench", "store", "--cards", "0"); code != cli.ExitInvalid {
		t.Errorf("--cards 0: exit %d, want %d", code, cli.ExitInvalid)
	}
	code, out, _ := runCLI(t, "bench", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, s := range bench.Scenarios {
		if !strings.Contains(out, "\n  "+s+" ") {
			t.Errorf("--help does not list scenario %q:\n%s", s, out)
		}
	}
}

func TestBenchHistory(t *testing.T) {
	dir := t.TempDir()
	got := benchJSON(t, []string{"--config", filepath.Join(dir, "WORKFLOW.md"), "--store", "sqlite:" + filepath.Join(dir, "board", "drover.db"),
		"bench", "history", "--cards", "200", "--events", "5000"}, []string{"cards", "events", "runs", "seed_s"}, "scenario", "backend")
	if got["scenario"] != "history" || got["events"] != 5000.0 || got["runs"] != 2000.0 {
		t.Errorf("scenario/events/runs = %v/%v/%v", got["scenario"], got["events"], got["runs"])
	}
	ops, _ := got["ops"].([]any)
	names := map[string]bool{}
	for _, o := range ops {
		op, _ := o.(map[string]any)
		names[op["name"].(string)] = true
		for _, k := range []string{"fresh_ms", "long_ms", "ratio"} {
			if v, ok := op[k].(float64); !ok || v <= 0 {
				t.Errorf("%v.%s = %v, want a positive number", op["name"], k, op[k])
			}
		}
	}
	for _, n := range []string{"status", "dashboard", "card", "claim"} {
		if !names[n] {
			t.Errorf("op %q not measured: %v", n, ops)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(m) != 0 {
		t.Errorf("the scratch stores were left behind: %v", m)
	}
	if code, _, _ := runCLI(t, "bench", "history", "--events", "0"); code != cli.ExitInvalid {
		t.Errorf("--events 0: exit %d, want %d", code, cli.ExitInvalid)
	}
}

func TestBenchBoard(t *testing.T) {
	got := benchJSON(t, []string{"bench", "board", "--cards", "30"}, []string{"cards", "samples", "seed_s"}, "scenario", "backend")
	benchOps(t, got, "p50_ms", "max_ms")("status", "dashboard", "tick")
}

func TestBenchBoardPostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	got := benchJSON(t, []string{"bench", "board", "--backend", "postgres", "--dsn", dsn, "--cards", "30"}, []string{"cards"}, "scenario")
	if got["backend"] != "postgres" {
		t.Errorf("backend = %v, want postgres", got["backend"])
	}
	benchOps(t, got, "p50_ms", "max_ms")("status", "dashboard", "tick")
}

// benchOps checks that got's ops carry positive keys and returns a check
// that the named ops were measured.
func benchOps(t *testing.T, got map[string]any, keys ...string) func(names ...string) {
	t.Helper()
	ops, _ := got["ops"].([]any)
	seen := map[string]bool{}
	for _, o := range ops {
		op, _ := o.(map[string]any)
		seen[fmt.Sprint(op["name"])] = true
		for _, k := range keys {
			if v, ok := op[k].(float64); !ok || v <= 0 {
				t.Errorf("%v.%s = %v, want a positive number", op["name"], k, op[k])
			}
		}
	}
	return func(names ...string) {
		t.Helper()
		for _, n := range names {
			if !seen[n] {
				t.Errorf("op %q not measured: %v", n, ops)
			}
		}
	}
}

func TestBenchRecover(t *testing.T) {
	got := benchJSON(t, []string{"bench", "recover", "--cards", "5"}, []string{"runs", "recovered", "wall_ms", "runs_per_s", "first_ms", "per_run_ms"}, "scenario", "backend")
	if got["runs"] != 5.0 || got["recovered"] != 5.0 {
		t.Errorf("runs/recovered = %v/%v, want 5/5", got["runs"], got["recovered"])
	}
}

// supervise runs real child processes (sh loops) and samples this
// process; the figures' size is not the test's business.
func TestBenchSupervise(t *testing.T) {
	got := benchJSON(t, []string{"bench", "supervise", "--agents", "3", "--window", "2s"},
		[]string{"agents", "window_s", "ramp_s", "cpu_share", "rss_mb", "max_rss_mb", "start_cpu_ms_per_agent"}, "scenario", "supervisors", "supervisor_cpu_share", "supervisor_pss_mb")
	if got["agents"] != 3.0 {
		t.Errorf("agents = %v, want 3", got["agents"])
	}
	for _, args := range [][]string{{"bench", "supervise", "--agents", "0"}, {"bench", "supervise", "--window", "0s"}} {
		if code, _, errw := runCLI(t, args...); code != cli.ExitInvalid || !strings.Contains(errw, args[2]) {
			t.Errorf("drover %s: exit %d, stderr %q", strings.Join(args, " "), code, errw)
		}
	}
}

// The text output of each scale scenario says what it measured.
func TestBenchScaleText(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"bench", "board", "--cards", "10"}, []string{"board: 10 cards", "status", "dashboard", "tick"}},
		{[]string{"bench", "recover", "--cards", "3"}, []string{"recover: 3 open runs", "all routed", "first routed"}},
		{[]string{"bench", "wakeup", "--cards", "1"}, []string{"p99", "cross_process", "in_process"}}, // a test binary: no other_process
	} {
		code, out, errw := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("drover %s: exit %d, stderr %s", strings.Join(c.args, " "), code, errw)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("drover %s: output lacks %q:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
	}
}
