package simulation

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/dispatch"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "replay one seed of TestSimulation (prints its step log)")
	seedsFlag = flag.Int("seeds", 0, "number of seeds (default 2000; 200 with -short; 20000 with -long)")
	longFlag  = flag.Bool("long", false, "run many more seeds with more steps")
	verbose   = flag.Bool("simlog", false, "with -seed: also print the dispatcher's log")
)

// params gives the world size for a seed: 4–8 cards, 60–150 steps (longer with -long).
func params(t *testing.T, seed uint64) Params {
	dir, err := os.MkdirTemp(TempDir(), "drover-sim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := Params{Seed: seed, Dir: dir, Cards: 4 + int(seed%5), Steps: 60 + int(seed*7919%91)}
	if *longFlag {
		p.Steps *= 3
	}
	return p
}

func runSeed(t *testing.T, seed uint64, printLog bool) {
	p := params(t, seed)
	if printLog && *verbose {
		p.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w, err := Run(p)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	defer w.Close()
	if printLog {
		t.Logf("seed %d step log:\n%s", seed, w.StepLog())
	}
	if v := w.Violations(); len(v) > 0 {
		t.Fatalf("seed %d: %d invariant violation(s):\n  %s\n\nreplay: go test ./simulation -run 'TestSimulation$' -seed=%d -v\n\nstep log:\n%s",
			seed, len(v), strings.Join(v, "\n  "), seed, w.StepLog())
	}
}

// TestSimulation runs thousands of seeded worlds; -seed=N replays one.
func TestSimulation(t *testing.T) {
	if *seedFlag != 0 {
		runSeed(t, *seedFlag, true)
		return
	}
	n := 2000
	switch {
	case *seedsFlag > 0:
		n = *seedsFlag
	case *longFlag:
		n = 20000
	case testing.Short():
		n = 200
	}
	for i := 1; i <= n; i++ {
		seed := uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runSeed(t, seed, false)
		})
	}
}

// A seed replays exactly: the same step log twice.
func TestSimulationIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		var logs [2]string
		for i := range logs {
			w, err := Run(params(t, seed))
			if err != nil {
				t.Fatal(err)
			}
			logs[i] = w.StepLog()
			w.Close()
		}
		if logs[0] != logs[1] {
			a, b := strings.Split(logs[0], "\n"), strings.Split(logs[1], "\n")
			for i := 0; i < len(a) && i < len(b); i++ {
				if a[i] != b[i] {
					t.Fatalf("seed %d diverged at line %d:\n  %s\n  %s", seed, i, a[i], b[i])
				}
			}
			t.Fatalf("seed %d: step logs differ in length (%d, %d lines)", seed, len(a), len(b))
		}
	}
}

// TestSimulationReachesEveryRoutingPath: the seeded histories drive the
// dispatcher down every path a finished run can take in production
// (dispatch.RoutePaths), so the invariants are checked on all of them. A
// path no seed reaches is a path the simulation does not cover: this fails
// and names it.
func TestSimulationReachesEveryRoutingPath(t *testing.T) {
	seen := map[string]int{}
	missing := func() []string {
		var out []string
		for _, p := range dispatch.RoutePaths() {
			if seen[p] == 0 {
				out = append(out, p)
			}
		}
		return out
	}
	seeds := 0
	for seed := uint64(1); seed <= 1500 && len(missing()) > 0; seed++ {
		w, err := Run(params(t, seed))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for p, n := range w.Paths() {
			if seen[p] == 0 {
				t.Logf("seed %d reaches %s", seed, p)
			}
			seen[p] += n
		}
		w.Close()
		seeds++
	}
	if m := missing(); len(m) > 0 {
		t.Fatalf("after %d seeds no history took the routing paths %v (reached: %v)", seeds, m, seen)
	}
	t.Logf("every routing path reached within %d seeds: %v", seeds, seen)
}
