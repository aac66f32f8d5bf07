package policybench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// Drover is the policy name of drover's own row.
const Drover = "drover"

// profile is the one agent profile of the benchmark's board.
const profile = "sim"

// droverWorkflow: the sim kind with a spec schema (a card needs its plan),
// drover's built-in failure policy (no policy section: its defaults).
const droverWorkflow = `---
agents:
  default: sim
  profiles:
    sim:
      kind: sim
      spec_schema: {type: object, required: [plan], properties: {plan: {type: string}}}
workspace: {root: %q, cleanup: never}
dispatch: {node: bench, lease: 30s, poll_interval: 5s, max_concurrent: %d}
---
{{ card.title }}
`

var start = time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)

// clock is the fake clock: it moves only when the player says.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// world is one scenario played through drover's real dispatcher, failure
// policy, operator service and SQLite store (in memory) on the fake clock.
type world struct {
	s     Scenario
	clk   *clock
	db    *sqlstore.DB
	d     *dispatch.Dispatcher
	ops   *operator.Service
	cfg   *config.Config
	index map[string]int // card id → scenario card
	life  map[string]int // card id → attempts so far
	cards []board.Card
	first map[string]time.Duration // first truthful moment per card
	// asked: when a card (or, under "", the profile) first asked a human;
	// touched: cards a human acted on.
	asked   map[string]time.Duration
	touched map[string]bool
	humans  int
}

// PlayDrover plays s through drover with slots agent slots
// (dispatch.max_concurrent); seed drives the backoff's jitter.
func PlayDrover(ctx context.Context, s Scenario, price float64, seed uint64, slots int) (Result, error) {
	dir, err := os.MkdirTemp("", "drover-policybench-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	w := &world{s: s, clk: &clock{t: start}, index: map[string]int{}, life: map[string]int{},
		first: map[string]time.Duration{}, asked: map[string]time.Duration{}, touched: map[string]bool{}}
	if err := w.open(ctx, dir, seed, slots); err != nil {
		return Result{}, err
	}
	defer w.db.Close()
	if err := w.play(ctx); err != nil {
		return Result{}, err
	}
	return w.result(ctx, price)
}

func (w *world) open(ctx context.Context, dir string, seed uint64, slots int) error {
	cfg, err := config.Parse([]byte(fmt.Sprintf(droverWorkflow, filepath.Join(dir, "ws"), max(slots, 1))), dir)
	if err != nil {
		return err
	}
	w.cfg = cfg
	if w.db, err = sqlstore.Open(ctx, "sqlite::memory:", sqlstore.WithClock(w.clk.Now)); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	w.d, err = dispatch.New(dispatch.Options{Store: w.db, Config: cfg, LogDir: filepath.Join(dir, "logs"),
		NewAgent: func(agent.Profile) (agent.Agent, error) { return scripted{w}, nil },
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)), Now: w.clk.Now, Rand: rng.Float64,
		Spawn: func(job func()) { job() },
		After: func(time.Duration) <-chan time.Time { c := make(chan time.Time, 1); c <- w.clk.Now(); return c }})
	if err != nil {
		return err
	}
	w.ops = &operator.Service{Store: w.db, Board: cfg.Board, Agents: []string{profile}, Actor: "operator:bench", Now: w.clk.Now}
	spec := []byte(`{"plan":"do the card"}`)
	if w.s.Invalid {
		spec = []byte(`{}`)
	}
	col, _ := cfg.Board.First(board.RoleEligible)
	for i := 0; i < w.s.Cards; i++ {
		c, err := w.db.CreateCard(ctx, "BEN", board.Card{Title: fmt.Sprintf("%s %d", w.s.Name, i+1), State: col.Name, Spec: spec}, "bench")
		if err != nil {
			return err
		}
		w.index[c.ID] = i
	}
	return nil
}

// scripted is the agent: each session ends as the scenario says.
type scripted struct{ w *world }

func (a scripted) Run(_ context.Context, inv agent.Invocation) (agent.Result, error) {
	w := a.w
	w.life[inv.Card.ID]++
	o := w.s.Attempt(w.index[inv.Card.ID], w.life[inv.Card.ID], w.clk.Now().Sub(start))
	sig := policy.Signals{AgentKind: "sim", ExitCode: 1, Now: w.clk.Now()}
	switch {
	case o.OK:
		sig.ExitCode = 0
		return agent.Result{Signals: sig, LastLine: "done"}, nil
	case o.Plain:
		sig.Stderr = o.Message
		return agent.Result{Signals: sig, LastLine: o.Message}, nil
	}
	cls := policy.Classification{Kind: o.Kind, Message: o.Message, Source: "sim"}
	if o.ResetAt > 0 {
		cls.RetryAt = start.Add(o.ResetAt)
	}
	return agent.Result{Signals: sig, LastLine: o.Message, Forced: &cls}, nil
}
