package cli_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/cli"
	"github.com/drover-dev/drover/internal/testkit"
)

// benchRun runs the drover binary's bench run tiny (the binary, not this
// test binary: only drover runs a node supervisor) and checks the shape of
// its JSON, never its timings.
func benchRun(t *testing.T, extra ...string) map[string]any {
	t.Helper()
	args := append([]string{"bench", "run", "--starts", "5", "--agents", "20", "--window", "3s", "--json"}, extra...)
	cmd := exec.Command(testkit.Binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("drover %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	for _, w := range []string{"starts: 5 cards made ready in one commit", "floor: the same 5 scripts", "supervise: all 20 agents running"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, stderr.String())
		}
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	section := func(name string, positive ...string) map[string]any {
		s, ok := got[name].(map[string]any)
		if !ok {
			t.Fatalf("no %q object in %s", name, out)
		}
		for _, k := range positive {
			if v, ok := s[k].(float64); !ok || v <= 0 {
				t.Errorf("%s.%s = %v, want a positive number", name, k, s[k])
			}
		}
		return s
	}
	starts := section("starts", "runs", "eligible_to_claim_p50_ms", "eligible_to_claim_p99_ms", "eligible_to_started_p50_ms",
		"eligible_to_started_p99_ms", "eligible_to_exec_p50_ms", "eligible_to_exec_p99_ms", "exit_to_commit_p50_ms",
		"exit_to_commit_p99_ms", "wall_s", "drover_cpu_ms_per_run", "total_cpu_ms_per_run", "supervisors")
	section("floor", "runs", "start_to_exec_p50_ms", "start_to_exec_p99_ms")
	sup := section("supervise", "agents", "window_s", "cpu_share", "rss_mb", "supervisors", "supervisor_rss_mb",
		"total_cpu_share", "total_rss_mb", "rss_per_agent_kb")
	if starts["runs"] != 5.0 || sup["agents"] != 20.0 {
		t.Errorf("starts.runs/supervise.agents = %v/%v, want 5/20", starts["runs"], sup["agents"])
	}
	// Eligible comes first: a claim before the card was ready, or an exec
	// before the claim, is a broken clock, not a fast drover.
	if c, e := starts["eligible_to_claim_p50_ms"].(float64), starts["eligible_to_exec_p50_ms"].(float64); e < c {
		t.Errorf("eligible → exec p50 %.1f ms before eligible → claim %.1f ms", e, c)
	}
	targets, _ := got["targets"].([]any)
	if len(targets) != 3 {
		t.Fatalf("targets = %v, want the issue's three", got["targets"])
	}
	for _, x := range targets {
		tg, _ := x.(map[string]any)
		if _, ok := tg["pass"].(bool); !ok || tg["name"] == "" || tg["limit"] == nil || tg["measured"] == nil || tg["unit"] == "" {
			t.Errorf("target %v lacks name, measured, limit, unit or pass", x)
		}
	}
	return got
}

func TestBenchRun(t *testing.T) {
	if got := benchRun(t); got["backend"] != "sqlite" {
		t.Errorf("backend = %v, want sqlite", got["backend"])
	}
}

func TestBenchRunPostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	if got := benchRun(t, "--backend", "postgres", "--dsn", dsn); got["backend"] != "postgres" {
		t.Errorf("backend = %v, want postgres", got["backend"])
	}
}

// Every bad flag is refused before anything runs, naming the flag.
func TestBenchRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "run", "--starts", "0"},
		{"bench", "run", "--agents", "-1"},
		{"bench", "run", "--window", "0s"},
		{"bench", "run", "--backend", "mysql"},
	} {
		if code, _, errw := runCLI(t, args...); code != cli.ExitInvalid || !strings.Contains(errw, strings.TrimPrefix(args[2], "--")) {
			t.Errorf("drover %s: exit %d, stderr %q", strings.Join(args, " "), code, errw)
		}
	}
}
