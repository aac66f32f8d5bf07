// Package bench measures drover end to end: the store's throughput, how fast
// a dispatcher wakes up for a new card, and how close a dispatcher comes to
// its ideal throughput. `drover bench` and the Go benchmarks share it. Every
// figure it returns is measured in the call that returns it, and each comes
// with a ratio to a reference measured (or configured) in the same run, so
// no result depends on a figure written down on another machine.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-dev/drover/internal/agent/registry"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// Scenarios are the names `drover bench` accepts, in the order it lists them.
var Scenarios = []string{"store", "wakeup", "dispatch", "compare", "history", "board", "recover", "supervise"}

// simSpec scripts the sim agent: succeed at once.
const simSpec = `{"sim": ["succeeded"], "sim_delay": "0s", "sim_cost_usd": 0}`

// workflow is the WORKFLOW.md of the benchmark dispatchers: the default board,
// the sim agent, no dashboard.
const workflow = `---
agents:
  default: sim
  profiles:
    sim: {kind: ` + registry.DemoKind + `}
%s
workspace: {root: %q, cleanup: never}
dispatch:
  node: %s
  lease: 30s
  poll_interval: %s
  max_concurrent: %d
server: {port: 0}
---
Bench card {{ card.identifier }}.
`

// observed wraps a store and reports claims (a change that inserts a run)
// and routed runs (a change that closes a run) as they commit.
type observed struct {
	store.Store
	claimed func(cardID string, at time.Time)
	routed  func(cardID string, at time.Time)
	running func(cardID string, at time.Time) // a run's agent process runs
	noWatch bool
}

func (o *observed) Apply(ctx context.Context, ch store.Change) error {
	err := o.Store.Apply(ctx, ch)
	if err != nil {
		return err
	}
	at := time.Now()
	if ch.NewRun != nil && o.claimed != nil {
		o.claimed(ch.NewRun.CardID, at)
	}
	if ch.Run != nil && ch.Run.Outcome != "" && o.routed != nil {
		o.routed(ch.Run.CardID, at)
	}
	return nil
}

// ApplyAll reports each written change of a batch as Apply does.
func (o *observed) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	refused, err := o.Store.ApplyAll(ctx, chs)
	if err != nil {
		return refused, err
	}
	at := time.Now()
	for i, ch := range chs {
		if refused[i] != nil {
			continue
		}
		if ch.NewRun != nil && o.claimed != nil {
			o.claimed(ch.NewRun.CardID, at)
		}
		if ch.Run != nil && ch.Run.Outcome != "" && o.routed != nil {
			o.routed(ch.Run.CardID, at)
		}
	}
	return refused, nil
}

// Watch returns a channel that never fires when wake-ups are off, so only
// the poll interval wakes the dispatcher.
func (o *observed) Watch(ctx context.Context) <-chan struct{} {
	if o.noWatch {
		return make(chan struct{})
	}
	return o.Store.Watch(ctx)
}

// rig is a dispatcher running on the store dsn names, with its workspaces and
// logs in dir.
type rig struct {
	dir     string
	dsn     string
	st      *sqlstore.DB
	obs     *observed
	d       *dispatch.Dispatcher
	cancel  context.CancelFunc
	done    chan error
	started chan struct{}
	// lastTick is when the dispatcher last finished a tick (UnixNano).
	lastTick atomic.Int64
}

// sqliteIn is the DSN of a bench store in the scratch directory dir.
func sqliteIn(dir string) string { return "sqlite:" + filepath.Join(dir, "drover.db") }

// scratchStore makes a scratch directory under dir ("" = the system's temp
// dir) for a benchmark's workspaces and logs, and the DSN of an empty
// scratch store: a SQLite file in that directory when storeDSN is "", else
// one on storeDSN's backend and place (see Scratch). cleanup removes both.
func scratchStore(ctx context.Context, dir, storeDSN string) (scratch, dsn string, cleanup func(), err error) {
	scratch, rmdir, err := tempDir(dir)
	if err != nil {
		return "", "", nil, err
	}
	if storeDSN == "" {
		return scratch, sqliteIn(scratch), rmdir, nil
	}
	dsn, drop, err := Scratch(ctx, storeDSN)
	if err != nil {
		rmdir()
		return "", "", nil, err
	}
	return scratch, dsn, func() { drop(); rmdir() }, nil
}

// startRig opens its own handle on the store dsn names and makes a
// dispatcher named node on it (not yet running).
func startRig(ctx context.Context, dsn, dir, node string, poll time.Duration, slots int, obs *observed) (*rig, error) {
	return startRigProfiles(ctx, dsn, dir, node, poll, slots, "", obs)
}

// startRigProfiles is startRig with more agent profiles (YAML lines
// indented under agents.profiles) beside the sim one.
func startRigProfiles(ctx context.Context, dsn, dir, node string, poll time.Duration, slots int, profiles string, obs *observed) (*rig, error) {
	r := &rig{dir: dir, dsn: dsn, obs: obs, done: make(chan error, 1), started: make(chan struct{})}
	var err error
	if r.st, err = sqlstore.Open(ctx, r.dsn); err != nil {
		return nil, err
	}
	r.obs.Store = r.st
	cfg, err := config.Parse([]byte(fmt.Sprintf(workflow, profiles, filepath.Join(dir, "workspaces"), node, poll, slots)), dir)
	if err != nil {
		r.st.Close()
		return nil, err
	}
	var once sync.Once
	r.d, err = dispatch.New(dispatch.Options{Store: r.obs, Config: cfg, LogDir: filepath.Join(dir, "logs"),
		Log: discardLogger(), OnRunning: func(cardID, _ string, _ int, at time.Time) {
			if obs.running != nil {
				obs.running(cardID, at)
			}
		}, OnTick: func() {
			r.lastTick.Store(time.Now().UnixNano())
			once.Do(func() { close(r.started) })
		}})
	if err != nil {
		r.st.Close()
		return nil, err
	}
	return r, nil
}

// firstTickLimit bounds the wait for a dispatcher's first tick where the
// caller has no better bound. A tick claims while slots are free and
// zero-delay sim runs free them again at once, so on a big ready backlog the
// first tick can be most of the run (PostgreSQL, 10,000 cards, a loaded
// machine: more than 5 minutes): callers that measure one pass their whole
// run's limit.
const firstTickLimit = 5 * time.Minute

// run starts the dispatcher and waits for its first tick, at most limit.
func (r *rig) run(ctx context.Context, limit time.Duration) error {
	ctx, r.cancel = context.WithCancel(ctx)
	go func() { r.done <- r.d.Run(ctx) }()
	select {
	case <-r.started:
		return nil
	case err := <-r.done:
		return fmt.Errorf("dispatcher stopped before its first tick: %v", err)
	case <-time.After(limit):
		return fmt.Errorf("dispatcher did not finish its first tick within %s", limit)
	}
}

func (r *rig) close() error {
	var err error
	if r.cancel != nil {
		r.cancel()
		err = <-r.done
	}
	if cerr := r.st.Close(); err == nil {
		err = cerr
	}
	return err
}

func createSim(ctx context.Context, st store.Store, title string) (board.Card, error) {
	return st.CreateCard(ctx, "BEN", board.Card{Title: title, State: "ready", Spec: []byte(simSpec)}, "bench")
}

// tempDir makes a scratch directory under dir ("" = the system's).
func tempDir(dir string) (string, func(), error) {
	d, err := os.MkdirTemp(dir, "drover-bench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}
