package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// RunCostOptions are what `drover bench run` measures.
type RunCostOptions struct {
	// Store is "" for a scratch SQLite file, else a PostgreSQL DSN (a
	// scratch schema in its database, dropped after).
	Store string
	// Dir holds the scratch directories ("" = the system's temp dir).
	Dir string
	// Starts cards become eligible at once (one commit) on an idle
	// dispatcher with as many slots; Agents are then supervised for Window.
	Starts, Agents int
	Window         time.Duration
	// Progress gets a line at a time (no newline) while it runs.
	Progress func(string)
	// OnWindow, when set, is called as the supervision window starts, and
	// what it returns as the window ends.
	OnWindow func() func()
}

// Defaults fills the zero fields with the sizes.
func (o RunCostOptions) Defaults() RunCostOptions {
	if o.Starts == 0 {
		o.Starts = 100
	}
	if o.Agents == 0 {
		o.Agents = 2000
	}
	if o.Window == 0 {
		o.Window = time.Minute
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o
}

// Check names the field that is out of range.
func (o RunCostOptions) Check() error {
	switch {
	case o.Starts <= 0:
		return fmt.Errorf("--starts must be positive (got %d)", o.Starts)
	case o.Agents <= 0:
		return fmt.Errorf("--agents must be positive (got %d)", o.Agents)
	case o.Window <= 0:
		return fmt.Errorf("--window must be positive (got %s)", o.Window)
	}
	return nil
}

// RunCost is what a run costs drover: K concurrent starts, then N agents
// supervised, with the targets beside the figures.
type RunCost struct {
	Backend   string         `json:"backend"`
	Starts    StartStats     `json:"starts"`
	Floor     FloorStats     `json:"floor"`
	Supervise SuperviseStats `json:"supervise"`
	Targets   []Target       `json:"targets"`
}

// StartStats are K runs of a script agent (stamp its start, sleep a
// second, stamp its end, exit 0) that all became eligible in one commit.
type StartStats struct {
	Runs int `json:"runs"`
	// Latencies in ms, p50 and p99 by nearest rank (with fewer than 100
	// runs p99 is the slowest): eligible is the store's time of the event
	// that moved the cards to ready (taken before its commit); claimed the
	// claim's commit; exec the moment drover learnt that the agent's
	// process runs (its execve succeeded: os.StartProcess returned in the
	// node supervisor, and its answer reached drover); script the
	// script's first command (date +%s%N: the exec, the shell's start-up
	// and one more fork and exec, the agent's own start-up under K
	// others'); exit the script's last command, before it exits; committed
	// the commit of the run's routing (the card's new state).
	EligibleToClaimP50MS float64 `json:"eligible_to_claim_p50_ms"`
	EligibleToClaimP99MS float64 `json:"eligible_to_claim_p99_ms"`
	// started is the run's started event (recorded after the workspace is
	// ready, before the agent's process is started).
	EligibleToStartedP50MS float64 `json:"eligible_to_started_p50_ms"`
	EligibleToStartedP99MS float64 `json:"eligible_to_started_p99_ms"`
	EligibleToExecP50MS    float64 `json:"eligible_to_exec_p50_ms"`
	EligibleToExecP99MS    float64 `json:"eligible_to_exec_p99_ms"`
	EligibleToScriptP50MS  float64 `json:"eligible_to_script_p50_ms"`
	EligibleToScriptP99MS  float64 `json:"eligible_to_script_p99_ms"`
	ExitToCommitP50MS      float64 `json:"exit_to_commit_p50_ms"`
	ExitToCommitP99MS      float64 `json:"exit_to_commit_p99_ms"`
	// WallS runs from the eligible commit to the last routing commit.
	WallS float64 `json:"wall_s"`
	// CPU per run over WallS, in ms: the drover process (the dispatcher in
	// this process; children excluded) and its node supervisor (the
	// agents, its children, excluded), and together.
	DroverCPUMSPerRun     float64 `json:"drover_cpu_ms_per_run"`
	SupervisorCPUMSPerRun float64 `json:"supervisor_cpu_ms_per_run"`
	TotalCPUMSPerRun      float64 `json:"total_cpu_ms_per_run"`
	Supervisors           int     `json:"supervisors"`
}

// Target is one of the targets beside the figure measured.
type Target struct {
	Name     string  `json:"name"`
	Measured float64 `json:"measured"`
	Limit    float64 `json:"limit"`
	Unit     string  `json:"unit"`
	Pass     bool    `json:"pass"`
}

// The targets.
const (
	targetExecP99MS = 100.0
	targetCPUShare  = 0.15
	targetRSSMB     = 400.0
	targetStartsAt  = 100
	targetAgentsAt  = 2000
)

// targets compares the figures with the targets.
func targets(rc RunCost) []Target {
	t := func(name string, v, limit float64, unit string) Target {
		return Target{Name: name, Measured: v, Limit: limit, Unit: unit, Pass: v < limit}
	}
	return []Target{
		t(fmt.Sprintf("eligible → exec p99, %d concurrent starts (target at %d)", rc.Starts.Runs, targetStartsAt), rc.Starts.EligibleToExecP99MS, targetExecP99MS, "ms"),
		t(fmt.Sprintf("%d agents: drover + supervisor CPU (target at %d)", rc.Supervise.Agents, targetAgentsAt), 100*rc.Supervise.TotalCPUShare, 100*targetCPUShare, "% of a core"),
		t(fmt.Sprintf("%d agents: drover + supervisor RSS (target at %d)", rc.Supervise.Agents, targetAgentsAt), rc.Supervise.TotalRSSMB, targetRSSMB, "MB"),
	}
}

// MeasureRunCost measures K concurrent starts, then N supervised agents,
// each on a scratch store of its own.
func MeasureRunCost(ctx context.Context, o RunCostOptions) (RunCost, error) {
	o = o.Defaults()
	var rc RunCost
	if err := o.Check(); err != nil {
		return rc, err
	}
	if err := raiseLimits(max(o.Starts, o.Agents)); err != nil {
		return rc, err
	}
	ss, err := measureStarts(ctx, o)
	if err != nil {
		return rc, fmt.Errorf("starts: %w", err)
	}
	rc.Starts = ss
	o.Progress(fmt.Sprintf("floor: the same %d scripts started at once by this process itself", o.Starts))
	if rc.Floor, err = measureFloor(ctx, o.Dir, o.Starts); err != nil {
		return rc, fmt.Errorf("floor: %w", err)
	}
	if rc.Floor.StartToExecP99MS > 0 {
		rc.Floor.ExecP99OverFloor = rc.Starts.EligibleToExecP99MS / rc.Floor.StartToExecP99MS
	}
	sv, err := measureSupervise(ctx, o.Dir, o.Store, o.Agents, o.Window, o.Progress, o.OnWindow)
	if err != nil {
		return rc, fmt.Errorf("supervise: %w", err)
	}
	rc.Supervise, rc.Backend = sv, sv.Backend
	rc.Targets = targets(rc)
	return rc, nil
}

// stampProfile is the script agent of the starts: it writes its start
// time to DIR/<card id>.start as its first command, sleeps a second so
// the K runs overlap, and writes its end time as its last.
func stampProfile(dir string) string {
	script := fmt.Sprintf(`date +%%s%%N > %s/$$DROVER_CARD_ID.start; sleep 1; date +%%s%%N > %s/$$DROVER_CARD_ID.end`, dir, dir)
	return fmt.Sprintf(`    stamp: {kind: command, command: /bin/sh, args: ["-c", %q], prompt: stdin, stall_timeout: 1h, timeout: 2h}`, script)
}

func measureStarts(ctx context.Context, o RunCostOptions) (StartStats, error) {
	ss := StartStats{Runs: o.Starts}
	scratch, dsn, cleanup, err := scratchStore(ctx, o.Dir, o.Store)
	if err != nil {
		return ss, err
	}
	defer cleanup()
	stamps := filepath.Join(scratch, "stamps")
	if err := os.Mkdir(stamps, 0o755); err != nil {
		return ss, err
	}
	var mu sync.Mutex
	claimed, running, routed := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	all := make(chan struct{})
	obs := &observed{
		claimed: func(id string, at time.Time) { mu.Lock(); claimed[id] = at; mu.Unlock() },
		running: func(id string, at time.Time) { mu.Lock(); running[id] = at; mu.Unlock() },
		routed: func(id string, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			routed[id] = at
			if len(routed) == o.Starts+1 { // and the warm-up
				close(all)
			}
		},
	}
	r, err := startRigProfiles(ctx, dsn, scratch, "bench", time.Minute, o.Starts, stampProfile(stamps), obs)
	if err != nil {
		return ss, err
	}
	defer r.close()
	o.Progress(fmt.Sprintf("starts: creating %d backlog cards on %s", o.Starts, r.st.Backend()))
	if err := createMany(ctx, r.st, o.Starts, func(i int) board.Card {
		return board.Card{Title: fmt.Sprint("start ", i), State: "backlog", Agent: "stamp"}
	}); err != nil {
		return ss, err
	}
	cards, err := r.st.ListCards(ctx, store.CardFilter{States: []string{"backlog"}})
	if err != nil {
		return ss, err
	}
	if len(cards) != o.Starts {
		return ss, fmt.Errorf("bench: %d backlog cards listed, %d created", len(cards), o.Starts)
	}
	// One run first, as a node that ran before: its node supervisor is
	// started (once per drover process) and the agent's files are cached.
	warm, err := r.st.CreateCard(ctx, "BEN", board.Card{Title: "warm-up", State: "ready", Agent: "stamp"}, "bench")
	if err != nil {
		return ss, err
	}
	if err := r.run(ctx, firstTickLimit); err != nil {
		return ss, err
	}
	if err := waitRouted(ctx, &mu, routed, warm.ID, time.Minute); err != nil {
		return ss, err
	}
	settle(ctx, r)
	// Every card ready in one commit: the K starts are concurrent.
	chs := make([]store.Change, len(cards))
	for i, c := range cards {
		next := c
		next.State = "ready"
		chs[i] = store.Change{Card: &next, Events: []board.Event{{CardID: c.ID, Type: board.EvMoved, Actor: "bench", Reason: "moved to ready"}}}
	}
	cpu0, sup0 := selfCPU(), supervisors()
	t0 := time.Now()
	o.Progress(fmt.Sprintf("starts: %d cards made ready in one commit", o.Starts))
	refused, err := r.st.ApplyAll(ctx, chs)
	if err != nil {
		return ss, err
	}
	for i, e := range refused {
		if e != nil {
			return ss, fmt.Errorf("bench: moving %s to ready: %w", cards[i].Identifier, e)
		}
	}
	limit := time.Duration(o.Starts)*100*time.Millisecond + time.Minute
	select {
	case <-all:
	case <-ctx.Done():
		return ss, ctx.Err()
	case <-time.After(limit):
		mu.Lock()
		n := len(routed)
		mu.Unlock()
		return ss, fmt.Errorf("bench: %d of %d runs routed within %s", n, o.Starts, limit)
	}
	cpu1, sup1 := selfCPU(), supervisors()
	ss.WallS = time.Since(t0).Seconds()
	ss.Supervisors = len(sup1)
	ss.DroverCPUMSPerRun = msOf(cpu1-cpu0) / float64(o.Starts)
	ss.SupervisorCPUMSPerRun = msOf(supCPUDelta(sup0, sup1)) / float64(o.Starts)
	ss.TotalCPUMSPerRun = ss.DroverCPUMSPerRun + ss.SupervisorCPUMSPerRun
	o.Progress(fmt.Sprintf("starts: %d runs routed in %.1fs", o.Starts, ss.WallS))

	var toClaim, toStarted, toExec, toScript, toCommit []time.Duration
	for _, c := range cards {
		eligible, started, err := eventTimes(ctx, r.st, c.ID)
		if err != nil {
			return ss, err
		}
		start, err1 := readStamp(filepath.Join(stamps, c.ID+".start"))
		end, err2 := readStamp(filepath.Join(stamps, c.ID+".end"))
		if err := errors.Join(err1, err2); err != nil {
			return ss, fmt.Errorf("bench: the agent of %s left no stamp: %w", c.Identifier, err)
		}
		mu.Lock()
		cl, ex, rt := claimed[c.ID], running[c.ID], routed[c.ID]
		mu.Unlock()
		if ex.IsZero() {
			return ss, fmt.Errorf("bench: the run of %s never said its process runs", c.Identifier)
		}
		toClaim = append(toClaim, cl.Sub(eligible))
		toStarted = append(toStarted, started.Sub(eligible))
		toExec = append(toExec, ex.Sub(eligible))
		toScript = append(toScript, start.Sub(eligible))
		toCommit = append(toCommit, rt.Sub(end))
	}
	ss.EligibleToClaimP50MS, ss.EligibleToClaimP99MS = p50p99(toClaim)
	ss.EligibleToStartedP50MS, ss.EligibleToStartedP99MS = p50p99(toStarted)
	ss.EligibleToExecP50MS, ss.EligibleToExecP99MS = p50p99(toExec)
	ss.EligibleToScriptP50MS, ss.EligibleToScriptP99MS = p50p99(toScript)
	ss.ExitToCommitP50MS, ss.ExitToCommitP99MS = p50p99(toCommit)
	return ss, nil
}

// waitRouted waits until the card's run is routed.
func waitRouted(ctx context.Context, mu *sync.Mutex, routed map[string]time.Time, cardID string, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		mu.Lock()
		_, ok := routed[cardID]
		mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: the warm-up run was not routed within %s", limit)
}

// settle waits until the dispatcher has gone back to sleep after its
// first tick (nothing to claim yet), at most a few seconds.
func settle(ctx context.Context, r *rig) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if time.Since(time.Unix(0, r.lastTick.Load())) >= quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// eventTimes are the store's times of the event that made the card ready
// and of its run's started event.
func eventTimes(ctx context.Context, st store.Store, cardID string) (moved, started time.Time, err error) {
	evs, err := st.ListEvents(ctx, store.EventFilter{CardID: cardID})
	if err != nil {
		return moved, started, err
	}
	for _, e := range evs {
		switch {
		case e.Type == board.EvMoved && moved.IsZero():
			moved = e.At
		case e.Type == board.EvStarted && started.IsZero():
			started = e.At
		}
	}
	if moved.IsZero() || started.IsZero() {
		return moved, started, fmt.Errorf("bench: card %s lacks its %s or %s event", cardID, board.EvMoved, board.EvStarted)
	}
	return moved, started, nil
}

// readStamp reads a time written by date +%s%N.
func readStamp(path string) (time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not date +%%s%%N's output: %w", path, b, err)
	}
	return time.Unix(0, ns), nil
}

// p50p99 are the nearest-rank median and 99th percentile in ms.
func p50p99(ds []time.Duration) (float64, float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return msOf(percentile(sorted, 0.5)), msOf(percentile(sorted, 0.99))
}
