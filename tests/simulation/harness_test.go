// Package simulation drives the real dispatcher, failure policy, operator
// service and SQLite store from a seed, on a fake clock, with a fake
// in-process agent, random operator actions, process crashes and store
// faults, and checks the invariants of docs/design.md, Invariants, after
// every step.
//
// Determinism: exactly one goroutine touches the store at a time. The
// dispatcher hands each job to World.spawn (dispatch.Options.Spawn), which
// waits until the job has either finished (an agent that answers at once) or
// reached the fake agent and parked there. A parked agent is released by the
// harness (after N steps, when its run was stopped, or at a crash), and the
// harness then waits for the job goroutine to end (routed, or failed against
// a dead store). Leases are renewed by the harness calling
// Dispatcher.Heartbeat before every fake-clock advance of at most a third of a
// lease. Every random choice (harness, agent verdicts, store faults, the
// policy's jitter) comes from one seeded generator used in that order.
package simulation

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/testkit"
)

// Params shapes one simulated world.
type Params struct {
	Seed  uint64
	Steps int // steps before the settle phase
	Cards int // cards created at the start (more may be added)
	Dir   string
	Log   *slog.Logger // the dispatcher's log (nil: discarded)
}

// proc is one dispatcher process.
type proc struct {
	node     string
	d        *dispatch.Dispatcher
	st       *simStore
	dead     bool
	dieAfter int // >= 0: the process dies after this many more store calls
	// partitioned: the process stopped renewing its leases (a pause, a cut
	// network) while its agents go on; a successor runs beside it.
	partitioned bool
}

// invocation is the fake agent's own record of one session.
type invocation struct {
	card      board.Card
	run       board.Run
	proc      *proc
	ctx       context.Context
	startStep int
	endStep   int
	ended     bool
	steps     int // parked agents: steps left before they answer
	verdict   agent.Result
	calls     agent.Calls // the agent's own calls (drover mcp's service)
	tried     string      // the report kind its call sent, "" none
	report    string      // the report kind its call stored (by the reply), "" none
	release   chan struct{}
	done      chan struct{}
}

// World is one seeded simulation.
type World struct {
	p    Params
	mu   sync.Mutex // guards rng (job goroutines draw while the harness waits)
	rng  *rand.Rand
	clk  *testkit.Clock
	db   store.Store
	raw  store.Store // db without faults, for the checker
	cfg  *config.Config
	ops  *operator.Service
	proc *proc

	maxAttempts int
	lease       time.Duration
	nodes       int
	faultRate   float64
	settling    bool

	leader      string
	leaderUntil time.Time

	invs    []*invocation
	live    map[string]*invocation // card id → live session
	parked  []*invocation          // sessions waiting for the harness
	entered chan *invocation

	step       int
	steplog    []string
	violations []string
	chk        checker
	// paths counts the routing paths the dispatcher took (Options.OnRoute).
	paths map[string]int
	// faultFrom..faultTo are the steps of the sim profile's fault: every
	// session of it fails the same way (verdictFor).
	faultFrom, faultTo int
	// stale is a partitioned process still running agents beside w.proc.
	stale *proc
}

// workflow is the simulated world's WORKFLOW.md: the sim and planner
// agents, the real backoff with jitter and a breaker, on production-like timings.
func workflow(maxAttempts, slots int, root string) string {
	return testkit.NewWorkflow().
		Set("agents", testkit.PlannerAgents).
		Set("policy", fmt.Sprintf("max_attempts: %d\nbackoff: {base: 10s, max: 2m, jitter: 0.3}\nbreaker: {threshold: 3, window: 2m, cooldown: 3m}", maxAttempts)).
		Set("dispatch", fmt.Sprintf("{node: n1, lease: 30s, poll_interval: 5s, max_concurrent: %d}", slots)).
		Set("workspace", fmt.Sprintf("{root: %q}", root)).
		// Sessions cost $0.10 now and then: a card's cap stops the run that
		// crosses it (issue 13, item 1), and the day's cap holds with runs
		// in flight reserving their estimate (item 13).
		Set("limits", fmt.Sprintf("{max_cost_per_card_usd: 0.25, max_cost_per_day_usd: %v, estimated_cost_per_run_usd: %v}", dayCapUSD, estimateUSD)).
		String()
}

// NewWorld builds the world for a seed: a fresh SQLite store, the config,
// a few cards and one dispatcher process.
func NewWorld(p Params) (*World, error) {
	w := &World{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0x5eed)), live: map[string]*invocation{}, entered: make(chan *invocation)}
	w.clk = testkit.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	w.maxAttempts = 1 + w.rng.IntN(4)
	slots := 1 + w.rng.IntN(4)
	cfg, err := config.Parse([]byte(workflow(w.maxAttempts, slots, filepath.Join(p.Dir, "ws"))), p.Dir)
	if err != nil {
		return nil, err
	}
	w.cfg = cfg
	w.lease = cfg.Dispatch.Lease
	// An in-memory database: the SQLite store keeps one connection, so the
	// database lives as long as the handle (a file costs ~60ms to set up).
	db, err := sqlstore.Open(context.Background(), "sqlite::memory:", sqlstore.WithClock(w.clk.Now))
	if err != nil {
		return nil, err
	}
	w.raw = db
	w.db = db
	if w.rng.IntN(3) > 0 {
		w.faultRate = 0.02 + 0.2*w.rng.Float64()
	}
	if w.rng.IntN(2) == 0 {
		w.faultFrom = w.rng.IntN(max(p.Steps/2, 1))
		w.faultTo = w.faultFrom + 40 + w.rng.IntN(80)
	}
	w.ops = &operator.Service{Store: &simStore{w: w, inner: db}, Board: cfg.Board, Agents: []string{"sim", "planner"}, Actor: "operator:sim", Now: w.clk.Now}
	w.chk.init(w)
	w.startProc("n1")
	for i := 0; i < p.Cards; i++ {
		w.addCard()
	}
	w.logf("world: max_attempts=%d max_concurrent=%d fault_rate=%.3f cards=%d profile fault in steps %d–%d", w.maxAttempts, slots, w.faultRate, p.Cards, w.faultFrom, w.faultTo)
	w.chk.check(false)
	return w, nil
}

// Close releases the store (and any agent still parked by a dead process).
func (w *World) Close() {
	for _, iv := range append([]*invocation(nil), w.parked...) {
		iv.proc.dead = true
		w.releaseOne(iv)
	}
	w.raw.Close()
}

func (w *World) logf(format string, a ...any) {
	w.steplog = append(w.steplog, fmt.Sprintf("%4d %s  ", w.step, w.clk.Now().Format("15:04:05"))+fmt.Sprintf(format, a...))
}

func (w *World) violate(format string, a ...any) {
	msg := fmt.Sprintf("step %d: ", w.step) + fmt.Sprintf(format, a...)
	w.violations = append(w.violations, msg)
	w.steplog = append(w.steplog, "     VIOLATION "+msg)
}

// Violations found so far.
func (w *World) Violations() []string { return w.violations }

// StepLog is the replayable story of the seed.
func (w *World) StepLog() string { return strings.Join(w.steplog, "\n") }

// --- randomness, all from one stream ---

func (w *World) intn(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.IntN(n)
}

func (w *World) float() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Float64()
}

func (w *World) fault() bool {
	return !w.settling && w.faultRate > 0 && w.float() < w.faultRate
}

func (w *World) lostReply() bool {
	return !w.settling && w.faultRate > 0 && w.float() < w.faultRate/4
}

// --- processes ---

func (w *World) startProc(node string) {
	p := &proc{node: node, dieAfter: -1}
	p.st = &simStore{w: w, inner: w.db, proc: p}
	log := w.p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d, err := dispatch.New(dispatch.Options{Store: p.st, Config: w.cfg, Node: node, LogDir: filepath.Join(w.p.Dir, "logs"),
		NewAgent: func(agent.Profile) (agent.Agent, error) { return &fakeAgent{w: w, p: p}, nil },
		Outbox:   outboxRows, Log: log, Now: w.clk.Now, Rand: w.float, Spawn: w.spawn,
		After:   func(time.Duration) <-chan time.Time { c := make(chan time.Time, 1); c <- w.clk.Now(); return c },
		OnRoute: w.routed})
	if err != nil {
		panic(err)
	}
	p.d = d
	w.proc = p
}

func outboxRows(_ *config.Config, n dispatch.Notice) []store.OutboxItem {
	b, _ := json.Marshal(map[string]string{"event": n.Event, "card": n.Card.Identifier})
	return []store.OutboxItem{{Key: n.Key + "/webhook", Channel: "webhook", Event: n.Event, CardID: n.Card.ID, Payload: b}}
}

// spawn runs a job until it finished or its agent parked (dispatch.Options.Spawn).
func (w *World) spawn(job func()) {
	done := make(chan struct{})
	go func() { defer close(done); job() }()
	select {
	case <-done:
	case iv := <-w.entered:
		iv.done = done
		w.parked = append(w.parked, iv)
	}
}

// releaseOne lets a parked agent answer and waits until its job has ended.
func (w *World) releaseOne(iv *invocation) {
	for i, x := range w.parked {
		if x == iv {
			w.parked = append(w.parked[:i], w.parked[i+1:]...)
			break
		}
	}
	close(iv.release)
	<-iv.done
}

// releaseDue releases parked agents whose time has come or whose run was stopped.
func (w *World) releaseDue(all bool) {
	for {
		var next *invocation
		for _, iv := range w.parked {
			if all || iv.steps <= 0 || iv.ctx.Err() != nil {
				next = iv
				break
			}
		}
		if next == nil {
			return
		}
		why := "answers"
		if next.ctx.Err() != nil {
			why = "stops (" + context.Cause(next.ctx).Error() + ")"
		}
		w.logf("agent %s#%d %s", next.card.Identifier, next.run.Attempt, why)
		w.releaseOne(next)
	}
}

// crash kills the live process: its agents die with it and nothing it would
// still write reaches the store. With midRoute one parked agent answers first
// and the process dies after a few store calls of that job's routing.
func (w *World) crash() {
	p := w.proc
	mid := len(w.parked) > 0 && w.intn(2) == 0
	if mid {
		iv := w.parked[w.intn(len(w.parked))]
		p.dieAfter = w.intn(6)
		w.logf("crash of %s while routing %s#%d (after %d store calls)", p.node, iv.card.Identifier, iv.run.Attempt, p.dieAfter)
		w.releaseOne(iv)
	} else {
		w.logf("crash of %s", p.node)
	}
	p.dead = true
	for _, iv := range append([]*invocation(nil), w.parked...) {
		if iv.proc == p {
			w.endSession(iv) // the agent's process group dies with drover
			w.releaseOne(iv)
		}
	}
	node := p.node
	if w.intn(2) == 0 {
		w.nodes++
		node = fmt.Sprintf("n%d", w.nodes+1)
	}
	w.logf("restart as %s", node)
	w.startProc(node)
}

// partition stops the live process renewing its leases, as a long pause
// or a cut network would, while its agents go on; a successor under
// another name runs beside it and recovers its claims once their leases
// end. The stale process's agents still answer: their routings find the
// claim gone (or, when the successor has not recovered it yet, still
// theirs). Now and then the stale process renews once more, right before
// its successor reads a card (simStore), as it would when the pause ends
// mid-recovery.
func (w *World) partition() {
	if w.stale != nil {
		return
	}
	p := w.proc
	p.partitioned = true
	w.stale = p
	for _, iv := range w.parked {
		if iv.proc == p {
			iv.steps += 10 + w.intn(20) // its agents go on past their leases
		}
	}
	w.nodes++
	node := fmt.Sprintf("n%d", w.nodes+1)
	w.logf("partition: %s stops renewing its leases; %s starts beside it", p.node, node)
	w.startProc(node)
}

// staleGone forgets the stale process once none of its agents is parked.
func (w *World) staleGone() {
	if w.stale == nil {
		return
	}
	for _, iv := range w.parked {
		if iv.proc == w.stale {
			return
		}
	}
	w.logf("%s has no agent left: it is gone", w.stale.node)
	w.stale.dead = true
	w.stale = nil
}

// --- steps ---

// Step takes one seeded action and checks the invariants.
func (w *World) Step() {
	w.step++
	for _, iv := range w.parked {
		iv.steps--
	}
	w.releaseDue(false)
	w.staleGone()
	switch r := w.intn(100); {
	case r < 35:
		w.tick()
	case r < 55:
		w.advance(time.Duration(w.intn(int(w.lease/time.Second)+1)) * time.Second)
	case r < 82:
		w.operatorAction()
	case r < 84:
		w.crash()
	case r < 86:
		w.partition()
	case r < 92:
		if w.faultRate > 0 {
			w.faultRate = 0
			w.logf("store faults stop")
		} else {
			w.faultRate = 0.02 + 0.25*w.float()
			w.logf("store faults start (rate %.3f)", w.faultRate)
		}
	default:
		if len(w.parked) > 0 {
			iv := w.parked[w.intn(len(w.parked))]
			w.logf("agent %s#%d answers early", iv.card.Identifier, iv.run.Attempt)
			w.releaseOne(iv)
		} else {
			w.tick()
		}
	}
	w.chk.check(false)
}

func (w *World) tick() {
	before := len(w.invs)
	next := w.proc.d.Tick(context.Background())
	st := w.proc.d.Status().StoreError
	w.logf("tick on %s: %d sessions started, next due %s%s", w.proc.node, len(w.invs)-before, fmtTime(next), errNote(st))
	w.releaseDue(false)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("15:04:05")
}

func errNote(s string) string {
	if s == "" {
		return ""
	}
	return " (store error: " + s + ")"
}

// advance moves the fake clock, renewing leases every third of a lease as
// the heartbeat goroutines would.
func (w *World) advance(d time.Duration) {
	w.logf("clock +%s", d)
	for d > 0 {
		w.proc.d.Heartbeat()
		w.releaseDue(false)
		s := min(d, w.lease/3)
		w.clk.Advance(s)
		d -= s
	}
}

func (w *World) pickCard() (board.Card, bool) {
	cs := w.chk.cards // the checker's view after the last step (ids never change)
	if len(cs) == 0 {
		return board.Card{}, false
	}
	return cs[w.intn(len(cs))], true
}

func (w *World) addCard() {
	title := fmt.Sprintf("card %d", w.intn(1000))
	spec := json.RawMessage(specs[w.intn(len(specs))])
	prio := w.intn(5)
	in := operator.Input{Title: &title, Spec: &spec, Priority: &prio}
	if w.intn(3) == 0 {
		a := "planner"
		in.Agent = &a
	}
	if w.intn(4) == 0 {
		if b, ok := w.pickCard(); ok {
			in.BlockedBy = &[]string{b.ID}
		}
	}
	c, err := w.ops.Add(context.Background(), in)
	w.logf("operator add %s agent=%q spec=%s: %v", c.Identifier, c.Agent, spec, errOr(err))
}

func errOr(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func (w *World) operatorAction() {
	ctx := context.Background()
	r := w.intn(100)
	if r < 8 {
		w.addCard()
		return
	}
	if r < 12 {
		_, err := w.ops.ResumeAgent(ctx, []string{"sim", "planner"}[w.intn(2)])
		w.logf("operator resume agents: %v", errOr(err))
		return
	}
	c, ok := w.pickCard()
	if !ok {
		return
	}
	var err error
	var what string
	switch {
	case r < 24:
		cols := w.cfg.Board.Columns
		col := cols[w.intn(len(cols))].Name
		what = "move to " + col
		_, err = w.ops.Move(ctx, c.ID, col, "sim move")
	case r < 32:
		what = "block"
		_, err = w.ops.Block(ctx, c.ID, "sim block")
	case r < 52:
		what = "resume"
		_, err = w.ops.Resume(ctx, c.ID)
	case r < 64:
		what = "reopen"
		_, err = w.ops.Reopen(ctx, c.ID)
	case r < 72:
		what = "cancel"
		_, err = w.ops.Cancel(ctx, c.ID, "sim cancel")
	case r < 88:
		spec := json.RawMessage(specs[w.intn(len(specs))])
		what = "edit spec " + string(spec)
		_, err = w.ops.Edit(ctx, c.ID, operator.Input{Spec: &spec})
	case r < 92:
		// Often refused as a cycle; the checker holds the board acyclic.
		b, _ := w.pickCard()
		what = "edit blocked_by " + b.Identifier
		_, err = w.ops.Edit(ctx, c.ID, operator.Input{BlockedBy: &[]string{b.ID}})
	default:
		what = "answer"
		_, err = w.ops.Answer(ctx, c.ID, "use sqlite")
	}
	w.logf("operator %s %s (%s): %v", what, c.Identifier, c.State, errOr(err))
}

// Settle stops the faults, lets every agent answer, moves the clock past
// leases and the leadership lease, and ticks until nothing more starts.
func (w *World) Settle() {
	w.step++
	w.settling = true
	w.faultRate = 0
	w.logf("settle")
	w.releaseDue(true)
	// One tick first, so a node that saw the store fail notices it is back:
	// it then waits a lease before judging other nodes' leases (a node
	// after an outage gives live owners time to renew), and the clock must
	// pass that wait too.
	w.tick()
	w.releaseDue(true)
	w.advance(2*w.lease + time.Second)
	quiet := false
	for i := 0; i < 60 && !quiet; i++ {
		before := len(w.invs)
		w.tick()
		w.releaseDue(true)
		quiet = len(w.invs) == before && !w.anyDueWork()
		w.chk.check(false)
	}
	if !quiet {
		w.violate("not quiescent after 60 settle ticks")
	}
	w.chk.check(true)
	w.summary()
}

// summary logs every card's final state and its runs.
func (w *World) summary() {
	ctx := context.Background()
	cs, _ := w.raw.ListCards(ctx, store.CardFilter{})
	sortBoardOrder(cs)
	states, _ := w.raw.ListAgentStates(ctx)
	for _, a := range states {
		w.logf("agent %s: %s (%s)", a.Name, a.State, a.Kind)
	}
	for _, c := range cs {
		rs, _ := w.raw.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		var runs []string
		for _, r := range rs {
			runs = append(runs, fmt.Sprintf("e%d#%d:%s/%s", r.RetryEpoch, r.Attempt, r.Outcome, r.Kind))
		}
		w.logf("final %s agent=%q %s next=%s spec=%s: %s | runs %s", c.Identifier, c.Agent, c.State, fmtNext(c), c.Spec, c.StateReason, strings.Join(runs, " "))
	}
}

// anyDueWork: a card is claimed (recovery pending) or an open run exists.
func (w *World) anyDueWork() bool {
	cs, _ := w.raw.ListCards(context.Background(), store.CardFilter{Claimed: store.Bool(true)})
	return len(cs) > 0
}

// Run plays the seed: steps, then settle.
func Run(p Params) (*World, error) {
	w, err := NewWorld(p)
	if err != nil {
		return nil, err
	}
	for i := 0; i < p.Steps && len(w.violations) == 0; i++ {
		w.Step()
	}
	if len(w.violations) == 0 {
		w.Settle()
	}
	return w, nil
}

// TempDir is where seeds keep their store and workspaces: tmpfs when there is one.
func TempDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// sortedKeys is a helper for deterministic reports.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// routed counts a routing path (dispatch.Options.OnRoute); it runs on a
// job's goroutine while the harness waits.
func (w *World) routed(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paths == nil {
		w.paths = map[string]int{}
	}
	w.paths[path]++
}

// Paths are the routing paths this world's dispatcher took, with counts.
func (w *World) Paths() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.paths))
	for k, v := range w.paths {
		out[k] = v
	}
	return out
}
