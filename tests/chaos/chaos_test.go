package chaos_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// plan is one chaos run: how long faults last, how often a process is
// killed, and how many cards arrive.
type plan struct {
	Nodes             int
	Duration          time.Duration
	KillMin, KillMax  time.Duration // pause between kills
	DownMax           time.Duration // a killed process stays down up to this long
	Cards             int
	MinKills          int
	Settle            time.Duration
	FailPercent       int
	MaxSleepMS, Slots int
}

// runChaos starts the cluster, feeds cards in bursts while a driver kills a
// random process with SIGKILL and restarts it, then stops the faults, waits
// for settling and checks every invariant. It returns the cluster, its
// nodes still up, for a test that goes on with the board.
func runChaos(t *testing.T, dsn string, p plan) (*cluster, report) {
	c := newCluster(t, clusterOpts{DSN: dsn, Nodes: p.Nodes, Slots: p.Slots, MaxSleepMS: p.MaxSleepMS, FailPercent: p.FailPercent})
	for _, nd := range c.nodes {
		c.start(nd)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var rep report
	var watchV []string
	stopWatch := c.claimWatch(context.Background(), &watchV)
	stopFollow := c.follow()
	began := time.Now()
	end := began.Add(p.Duration)

	// Cards arrive in bursts of 10 over the first 70% of the run, so
	// processes compete for them while kills happen.
	var feedErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bursts := (p.Cards + 9) / 10
		gap := time.Duration(float64(p.Duration) * 0.7 / float64(bursts))
		left := p.Cards
		for left > 0 {
			n := min(10, left)
			if err := c.addCards(n); err != nil {
				feedErr = err
				return
			}
			left -= n
			time.Sleep(gap)
		}
	}()

	// The driver: kill a random live process, restart it after a random
	// pause (sometimes at once: it recovers its own claims; sometimes after
	// its leases expired: the leader recovers them). With several nodes, one
	// is always left alive.
	var restarts sync.WaitGroup
	var early []string
	for time.Now().Before(end) {
		time.Sleep(p.KillMin + time.Duration(rng.Int64N(int64(p.KillMax-p.KillMin)+1)))
		for _, nd := range c.nodes {
			if nd.exitedEarly() {
				early = append(early, nd.name+" exited on its own:\n"+c.tail(nd, 20))
				c.kill(nd) // reap; the driver restarts it below
				go c.restart(nd)
			}
		}
		var live []*node
		for _, nd := range c.nodes {
			if up, _ := nd.up(); up {
				live = append(live, nd)
			}
		}
		if len(live) == 0 || (p.Nodes > 1 && len(live) < 2) {
			continue
		}
		victim := live[rng.IntN(len(live))]
		if !c.kill(victim) {
			continue
		}
		down := time.Duration(rng.Int64N(int64(p.DownMax) + 1))
		if rng.IntN(3) == 0 {
			down = 0
		}
		restarts.Add(1)
		go func(nd *node, d time.Duration) {
			defer restarts.Done()
			time.Sleep(d)
			c.restart(nd)
		}(victim, down)
	}
	restarts.Wait()
	wg.Wait()
	// Every node is up again: processes under their names must be refused.
	impostorV := c.impostors()
	rep.Kills = c.numKills()
	if feedErr != nil {
		t.Fatalf("adding cards: %v", feedErr)
	}
	if err := c.waitSettled(p.Cards, p.Settle); err != nil {
		stopWatch()
		for _, nd := range c.nodes {
			t.Logf("%s log tail:\n%s", nd.name, c.tail(nd, 30))
		}
		t.Fatal(err)
	}
	stopWatch()
	rep.Violations = append(rep.Violations, stopFollow()...)
	rep.Violations = append(rep.Violations, impostorV...)
	rep.Duration = time.Since(began)
	rep.Lives = c.starts
	c.check(&rep)
	rep.Violations = append(rep.Violations, watchV...)
	rep.Violations = append(rep.Violations, early...)
	t.Logf("chaos: %s", rep)
	for _, v := range rep.Violations {
		t.Errorf("violation: %s", v)
	}
	if rep.Kills < p.MinKills {
		t.Errorf("only %d kills, want at least %d", rep.Kills, p.MinKills)
	}
	if rep.Cards < p.Cards {
		t.Errorf("only %d cards, want %d", rep.Cards, p.Cards)
	}
	return c, rep
}

// TestChaosPostgres: three drover serve processes on one PostgreSQL, one of
// them SIGKILLed every few seconds (the short default run).
func TestChaosPostgres(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	runChaos(t, dsn, plan{Nodes: 3, Duration: 25 * time.Second, KillMin: 2 * time.Second, KillMax: 4 * time.Second,
		DownMax: 2 * lease, Cards: 40, MinKills: 5, Settle: 90 * time.Second, FailPercent: 40})
}

// TestChaosSQLite: one drover serve on a SQLite file, killed again and again.
func TestChaosSQLite(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "drover.db")
	runChaos(t, dsn, plan{Nodes: 1, Duration: 20 * time.Second, KillMin: 2 * time.Second, KillMax: 3 * time.Second,
		DownMax: lease, Cards: 25, MinKills: 5, Settle: 90 * time.Second, FailPercent: 40})
}

// TestChaosLongPostgres is the long variant (-chaos.long or
// DROVER_CHAOS_LONG=1): at least 2 minutes, at least 20 kills, 200 cards.
func TestChaosLongPostgres(t *testing.T) {
	if !long() {
		t.Skip("long chaos run: pass -chaos.long or set DROVER_CHAOS_LONG=1")
	}
	dsn := testkit.DSN(t, testkit.Postgres)
	runChaos(t, dsn, plan{Nodes: 3, Duration: 130 * time.Second, KillMin: 2 * time.Second, KillMax: 5 * time.Second,
		DownMax: 2 * lease, Cards: 200, MinKills: 20, Settle: 3 * time.Minute, FailPercent: 40})
}

// TestChaosLongSQLite is the long SQLite variant (same switch).
func TestChaosLongSQLite(t *testing.T) {
	if !long() {
		t.Skip("long chaos run: pass -chaos.long or set DROVER_CHAOS_LONG=1")
	}
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "drover.db")
	runChaos(t, dsn, plan{Nodes: 1, Duration: 60 * time.Second, KillMin: 2 * time.Second, KillMax: 3 * time.Second,
		DownMax: lease, Cards: 80, MinKills: 15, Settle: 3 * time.Minute, FailPercent: 40})
}
