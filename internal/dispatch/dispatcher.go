// Package dispatch is drover's main job: it claims eligible cards, runs their
// agents in workspaces, and routes every finished run through the failure
// policy to a state that tells the truth. One Dispatcher is the single
// authority for its process's mutable state; the store is the authority
// across processes.
package dispatch

import (
	"context"
	"errors"
	"github.com/drover-dev/drover/internal/agentchan"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/reload"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

// Options wires a Dispatcher.
type Options struct {
	Store   store.Store
	Config  *config.Config
	Watcher *reload.Watcher // optional: hot reload on each tick
	Node    string          // default: Config.Dispatch.Node
	LogDir  string          // run logs go to LogDir/<identifier>/<run>.log
	// GitDir holds the repositories' mirrors (workspace.git); default: a
	// git directory beside LogDir (.drover/git for drover serve).
	GitDir string
	// NewAgent builds the agent for a profile (default registry.New).
	NewAgent func(agent.Profile) (agent.Agent, error)
	// Outbox turns a notice into outbox rows (default: none).
	Outbox func(cfg *config.Config, n Notice) []store.OutboxItem
	// Env is added to every agent's environment.
	Env map[string]string
	// AgentSockets is the directory of the runs' agent channels
	// (internal/agentchan): when set, every run gets a socket of its own
	// and its token in DROVER_AGENT_SOCKET and DROVER_AGENT_TOKEN, which
	// drover mcp and drover run use instead of the store.
	AgentSockets string
	// SandboxHomes is the directory of the cards' sandbox homes: a
	// sandboxed run sees SandboxHomes/<card> at HOME, kept until the card's
	// workspace is cleaned up, so its CLI's session resumes. "" = a fresh
	// home per run.
	SandboxHomes string
	// SandboxProbe says why a sandbox cannot start on this node ("" when
	// it can); default sandbox.Probe. Tests give two nodes of one process
	// different answers.
	SandboxProbe func(sandbox.Config) string
	// MCPCommand is the drover binary runs start as their MCP server
	// (drover mcp, see mcp.go); "" wires none.
	MCPCommand    string
	Log           *slog.Logger
	Now           func() time.Time
	Rand          func() float64
	ShutdownGrace time.Duration // how long Run waits for agents to stop (default DefaultShutdownGrace)
	Metrics       Metrics       // optional
	// OnTick is called after every tick (tests, benchmarks).
	OnTick func()
	// OnRunning is called when a run's agent process runs (its exec
	// succeeded), with the time drover learnt it (benchmarks).
	OnRunning func(cardID, runID string, pid int, at time.Time)

	// Simulation seam (package simulation drives the real dispatcher on a
	// fake clock, one goroutine at a time). Zero values keep the production
	// path: every job in its own goroutine with its own heartbeat goroutine,
	// and real-time backoff when the store is unreachable while routing.
	//
	// Spawn, when set, is handed each job (claim to routing) instead of
	// starting it with a go statement, and no heartbeat goroutine is started:
	// the caller renews leases with Heartbeat. A simulation runs the job in a
	// goroutine and waits until it has reached its agent or finished.
	Spawn func(job func())
	// After replaces time.After for routing's retry backoff while the store
	// is unavailable (a simulation returns at once).
	After func(time.Duration) <-chan time.Time
	// OnRoute, when set, is told the path each routing took (RoutePaths):
	// the simulation checks that its seeds reach every one.
	OnRoute func(path string)
}

// Metrics receives what the dispatcher observes (Prometheus in production).
type Metrics interface {
	ObserveRun(r board.Run)
	ObserveStart(agent string, latency time.Duration)
	ObserveTick(d time.Duration)
}

// Dispatcher claims, runs and routes.
type Dispatcher struct {
	o    Options
	cfg  atomic.Pointer[config.Config]
	node string
	log  *slog.Logger

	// routeMu serialises the read-modify-write of agent breaker states
	// (routing and probe claims) within this process.
	routeMu sync.Mutex
	// routes writes routings, blocks before claims and notices.
	routes *router
	// records writes the live runs' own records (start, command line).
	records groupCommit

	// self is this process as a node: its name's hold and its status.
	self *self

	jobs liveJobs
	// live holds the live runs' figures until they are written.
	live *progressQueue
	// life ends when Run has stopped its agents: the heartbeat goroutine
	// and the progress flush end with it.
	life context.Context
	end  context.CancelFunc
	// lastFull is when Run's last full pass began and fullNext what it said
	// was due next (used by the Run loop's goroutine only; see tickPass).
	lastFull, fullNext time.Time
	usable             usability
	claims             claimLog

	// channel opens the runs' agent capabilities: one per dispatcher, so
	// its sweep of a dead serve's sockets runs once, not beside a run that
	// is opening its own (nil: no channel).
	channelOnce sync.Once
	channel     *agentchan.Channel

	// sweep removes the workspaces of cards moved into a sink between runs
	// (used by the Run loop's goroutine only).
	sweep sweeper

	// startHook, when set (tests), may veto starting the agent after a claim.
	startHook func(board.Card, board.Run) bool

	wake chan struct{}
	done chan struct{}
}

// NodeStatus is what this node wants operators to see; it is stored on the
// node row so `drover status` in another process shows it too.
type NodeStatus struct {
	ConfigError string `json:"config_error,omitempty"`
	// ConfigErrorSince is when the file was first refused (kept while the
	// same edit stays refused).
	ConfigErrorSince *time.Time `json:"config_error_since,omitempty"`
	StoreError       string     `json:"store_error,omitempty"`
	DispatchPaused   string     `json:"dispatch_paused,omitempty"`
	// TrackerError is an external tracker's outage or rate limit, from
	// TrackerErrorSince (set through SetTrackerError by the tracker's sync).
	TrackerError      string     `json:"tracker_error,omitempty"`
	TrackerErrorSince *time.Time `json:"tracker_error_since,omitempty"`
	// TrackerRefused says the tracker refused projections (the cards stay
	// where drover put them), from TrackerRefusedSince.
	TrackerRefused      string     `json:"tracker_refused,omitempty"`
	TrackerRefusedSince *time.Time `json:"tracker_refused_since,omitempty"`
	// ForgeError says the forge (workspace.git.pull_request) refused or
	// failed opening or reading pull requests, from ForgeErrorSince.
	ForgeError      string     `json:"forge_error,omitempty"`
	ForgeErrorSince *time.Time `json:"forge_error_since,omitempty"`
	// TrackerFaults are the issues whose data the tracker's sync could
	// not take as it is (set through SetTrackerFaults): each card's fault
	// stays with that card, and drover status names the issue, the
	// comment and the reason.
	TrackerFaults []tracker.Fault   `json:"tracker_faults,omitempty"`
	Unusable      map[string]string `json:"unusable_agents,omitempty"`
	Host          string            `json:"host,omitempty"`
}

// New checks the options and returns a dispatcher.
func New(o Options) (*Dispatcher, error) {
	if o.Store == nil || o.Config == nil {
		return nil, errors.New("dispatch: Store and Config are required")
	}
	if o.NewAgent == nil {
		o.NewAgent = registry.New
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.GitDir == "" && o.LogDir != "" {
		o.GitDir = filepath.Join(filepath.Dir(filepath.Clean(o.LogDir)), "git")
	}
	if o.LogDir == "" {
		o.LogDir = os.TempDir()
	}
	if o.GitDir == "" {
		o.GitDir = filepath.Join(os.TempDir(), "drover-git")
	}
	if o.SandboxProbe == nil {
		o.SandboxProbe = sandbox.Probe
	}
	d := &Dispatcher{o: o, wake: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	d.node = o.Node
	if d.node == "" {
		d.node = o.Config.Dispatch.Node
	}
	if d.node == "" {
		d.node, _ = os.Hostname()
	}
	d.log = o.Log.With("node", d.node)
	d.self = newSelf(o.Store, d.node, o.Now, d.lease, d.log)
	d.usable.probe = o.SandboxProbe
	d.life, d.end = context.WithCancel(context.Background())
	d.live = &progressQueue{st: o.Store, log: d.log, now: o.Spawn != nil, life: d.life}
	d.routes = &router{homes: o.SandboxHomes, workers: d.prepareWorkers(), st: o.Store, config: d.cfg.Load, outbox: o.Outbox, metrics: o.Metrics, log: d.log, node: d.node,
		now: o.Now, rand: o.Rand, after: o.After, mu: &d.routeMu, onRoute: o.OnRoute}
	d.cfg.Store(o.Config)
	return d, nil
}

// Node is this dispatcher's node name.
func (d *Dispatcher) Node() string { return d.node }

// Config is the configuration in force.
func (d *Dispatcher) Config() *config.Config { return d.cfg.Load() }

// Refresh asks for a tick as soon as possible (coalesced).
func (d *Dispatcher) Refresh() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Running is the number of live runs in this process.
func (d *Dispatcher) Running() int {
	return d.jobs.count()
}

// Run dispatches until ctx ends, then stops its agents, records their runs as
// interrupted, returns the cards to eligible and returns.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.self.begin() // a new process judges others' leases after a lease period
	if err := d.self.register(ctx, d.Running()); err != nil {
		return err
	}
	changes := d.o.Store.Watch(ctx)
	d.log.Info("dispatcher started", "store", d.o.Store.Backend(), "max_concurrent", d.cfg.Load().Dispatch.MaxConcurrent)
	timer := time.NewTimer(0)
	defer timer.Stop()
	full := true
	for {
		next := d.tickPass(ctx, full)
		if d.o.OnTick != nil {
			d.o.OnTick()
		}
		if err := d.self.lost(); err != nil {
			_ = d.shutdown()
			return err
		}
		wait := d.cfg.Load().Dispatch.PollInterval
		if wait <= 0 {
			wait = 5 * time.Second
		}
		// Tick at least three times a leader TTL, so a leader keeps leading.
		wait = min(wait, d.LeaderTTL()/3)
		if !next.IsZero() {
			if w := next.Sub(d.o.Now()); w < wait {
				wait = max(w, 10*time.Millisecond)
			}
		}
		timer.Reset(wait)
		full = false
		select {
		case <-ctx.Done():
			return d.shutdown()
		case <-changes:
		case <-d.wake:
		case <-d.done:
		case <-timer.C:
			full = true
		}
		if time.Since(d.lastFull) >= fullEvery {
			full = true
		}
		// Let a burst of changes settle into one tick.
		select {
		case <-ctx.Done():
			return d.shutdown()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// LeaderTTL is how long housekeeping leadership lasts without renewal: one
// lease period, so a dead leader's successor is in place, and recovers the
// dead leader's claims, about when those claims' leases end. The notification
// worker must use the same TTL (it shares the leader row).
func (d *Dispatcher) LeaderTTL() time.Duration { return d.lease() }

func (d *Dispatcher) lease() time.Duration {
	if l := d.cfg.Load().Dispatch.Lease; l > 0 {
		return l
	}
	return 30 * time.Second
}

// SetTrackerError records the external tracker's trouble on this node's
// status ("" when it is fine again); the next tick stores it.
func (d *Dispatcher) SetTrackerError(msg string) {
	d.self.update(func(st *NodeStatus) {
		if msg == "" {
			st.TrackerError, st.TrackerErrorSince = "", nil
			return
		}
		st.TrackerError, st.TrackerErrorSince = msg, d.self.since(st.TrackerErrorSince)
	})
}

// SetTrackerFaults records the issues whose data the tracker's sync could
// not take as it is (none: nil); the next tick stores them.
func (d *Dispatcher) SetTrackerFaults(fs []tracker.Fault) {
	d.self.update(func(st *NodeStatus) { st.TrackerFaults = fs })
}

// SetForgeError records the forge's last failure ("" clears it).
func (d *Dispatcher) SetForgeError(msg string) {
	d.self.update(func(st *NodeStatus) {
		if msg == "" {
			st.ForgeError, st.ForgeErrorSince = "", nil
			return
		}
		st.ForgeError, st.ForgeErrorSince = msg, d.self.since(st.ForgeErrorSince)
	})
}

// SetTrackerRefused records that the tracker refused a projection.
func (d *Dispatcher) SetTrackerRefused(msg string) {
	d.self.update(func(st *NodeStatus) {
		st.TrackerRefused, st.TrackerRefusedSince = msg, d.self.since(st.TrackerRefusedSince)
	})
}

// Status returns this node's status.
func (d *Dispatcher) Status() NodeStatus { return d.self.snapshot() }

// shutdown stops every agent (cause "shutdown") and waits for their routing.
func (d *Dispatcher) shutdown() error {
	defer d.end()
	jobs := d.jobs.snapshot()
	d.log.Info("stopping", "running", len(jobs))
	for _, j := range jobs {
		j.cancel(errShutdown)
	}
	deadline := time.After(d.o.ShutdownGrace)
	for _, j := range jobs {
		select {
		case <-j.finished:
		case <-deadline:
			d.log.Warn("agents still stopping at the end of the shutdown grace", "left", d.Running())
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownFinalWrite)
	defer cancel()
	_ = d.self.touch(ctx, d.Running(), true, "")
	return nil
}

// DefaultShutdownGrace is how long Run, once its context ends, waits for the
// agents it stopped to finish and their runs to be routed;
// ShutdownFinalWrite bounds the node's last store write after that. A
// service manager's stop timeout must exceed their sum (docs/drover.service).
const (
	DefaultShutdownGrace = 20 * time.Second
	ShutdownFinalWrite   = 5 * time.Second
)

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runner is what runs this dispatcher's attempts.
func (d *Dispatcher) runner() *runner {
	r := &runner{st: d.o.Store, records: &d.records, logDir: d.o.LogDir, gitDir: d.o.GitDir, newAgent: d.o.NewAgent, env: d.o.Env, mcpCommand: d.o.MCPCommand, node: d.node, now: d.o.Now, homes: d.o.SandboxHomes, onRunning: d.o.OnRunning}
	d.channelOnce.Do(func() {
		if d.o.AgentSockets != "" {
			d.channel = &agentchan.Channel{Dir: d.o.AgentSockets, Store: d.o.Store, Now: d.o.Now}
		}
	})
	r.channel = d.channel
	return r
}
