package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// drover bench fleet at a tiny size: two drover serve processes on a fresh
// database per size, the table with a row per size and its ratios, and the
// killed node's runs back on the other one. Timings are not asserted (the
// machine is shared); the shape and the recovery are.
func TestBenchFleetTiny(t *testing.T) {
	gate.Postgres.Require(t)
	bin := testkit.Binary(t)
	code, out, errOut := runCLI(t, "--config", filepath.Join(t.TempDir(), "WORKFLOW.md"), "bench", "fleet",
		"--postgres", os.Getenv(gate.PostgresEnv), "--drover-bin", bin,
		"--sizes", "6,10", "--nodes", "2", "--window", "3s", "--lease", "3s", "--poll", "2s", "--every", "500ms", "--probes", "4")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "SIGKILL fleet-1") {
		t.Errorf("no progress line about the kill on stderr:\n%s", errOut)
	}
	for _, want := range []string{"statements: pg_stat_", "stmts/agent/s", "claim p99 ms", "hb lag s", "recovery s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	base := regexp.MustCompile(`(?m)^\s+6\s+\d+ \(×1\.0\)\s+[0-9.]+ \(×1\.0\)`)
	if !base.MatchString(out) {
		t.Errorf("no base row (6 agents, each ratio ×1.0):\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^\s+10\s+\d+ \(×[0-9.]+\)\s+[0-9.]+ \(×[0-9.]+\)`).MatchString(out) {
		t.Errorf("no row for 10 agents with its ratios:\n%s", out)
	}
	// The killed node's share of a size is whatever it had claimed (the
	// nodes race for the cards): every one of them back is what counts.
	for _, size := range []string{"6", "10"} {
		m := regexp.MustCompile(`(?m)^\s+` + size + ` agents: (\d+) of (\d+) runs back`).FindStringSubmatch(out)
		if m == nil || m[1] != m[2] || m[1] == "0" {
			t.Errorf("no recovery line with all of the killed node's runs back for %s agents:\n%s", size, out)
		}
	}
	// The databases are dropped.
	if strings.Contains(errOut, "drover_fleet_") {
		t.Errorf("a database name in the errors:\n%s", errOut)
	}
}

// Bad flags are refused before anything starts, naming the flag.
func TestBenchFleetRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "1"}, "--nodes"},
		{[]string{"--sizes", "10,5"}, "--sizes"},
		{[]string{"--sizes", "3", "--nodes", "5"}, "--sizes"},
		{[]string{"--postgres", ""}, "--postgres"},
	} {
		code, _, errOut := runCLI(t, append([]string{"--config", filepath.Join(t.TempDir(), "WORKFLOW.md"), "bench", "fleet", "--drover-bin", "/bin/true", "--postgres", "postgres://x@127.0.0.1:1/none"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming %s", c.args, code, errOut, c.want)
		}
	}
}
