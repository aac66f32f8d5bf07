package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/drover-dev/drover/internal/agent/registry"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
)

// demoWorkflow is the demo's WORKFLOW.md: the sim agent, a profile that
// requires a plan, and a fast retry schedule so the tour takes seconds.
const demoWorkflow = `---
agents:
  default: sim
  profiles:
    sim: {kind: ` + registry.DemoKind + `}
    planner:
      kind: ` + registry.DemoKind + `
      spec_schema:
        type: object
        required: [plan]
        properties:
          plan: {type: string, minLength: 1}
policy:
  max_attempts: 3
  backoff: {base: 1s, max: 2s, jitter: 0}
  kinds:
    provider_unavailable: {tiers: [1s]}
dispatch:
  node: demo
  lease: 5s
  poll_interval: 1s
  max_concurrent: 3
server: {host: 127.0.0.1, port: %d}
---
Work on {{ card.identifier }}: {{ card.title }} (attempt {{ attempt }}).
{{ card.body }}
`

type demoCard struct {
	title, body, agent string
	spec               map[string]any
}

var demoCards = []demoCard{
	{"Clean success", "Runs once and finishes.", "", map[string]any{"sim": []string{"succeeded"}, "sim_delay": "1s"}},
	{"Flaky provider, then success", "The provider is overloaded once, the tests fail once, then it works.", "",
		map[string]any{"sim": []string{"provider_unavailable", "agent_failed", "succeeded"}, "sim_delay": "500ms"}},
	{"Rate limited, then success", "A 429 defers the card until the reset; it does not spend an attempt.", "",
		map[string]any{"sim": []string{"rate_limited", "succeeded"}, "sim_reset": "2s", "sim_delay": "300ms"}},
	{"Keeps failing", "Fails every time: it gives up after policy.max_attempts and says so.", "",
		map[string]any{"sim": []string{"agent_failed"}, "sim_delay": "300ms"}},
	{"Missing plan", "The planner profile requires spec.plan; this card has none, so it blocks before any session.", "planner",
		map[string]any{"sim": []string{"succeeded"}}},
	{"Asks a question", "The agent needs a human answer; the card is parked with the question.", "",
		map[string]any{"sim": []string{"input_required", "succeeded"}, "sim_question": "Deploy to staging or production?", "sim_delay": "500ms"}},
}

// DemoRow is one line of the demo's final table (demo --json prints these).
type DemoRow struct {
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	State      string `json:"state"`
	Attempts   int    `json:"attempts"`
	Kind       string `json:"kind"`
	Reason     string `json:"reason"`
}

func (a *app) demoCmd() *cobra.Command {
	var untilSettled bool
	var port int
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "demo",
		Short: "A self-contained tour: a temporary board of scripted sim cards and the dispatcher",
		Long: `Create a temporary board with a handful of scripted sim cards (a clean success,
a flaky one, a rate-limited one, one that keeps failing, one with invalid input,
one that asks a question) and run the dispatcher on it with the dashboard.
With --until-settled it exits once every card has settled and prints each card's
final state, attempts and reason.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "drover-demo-")
			if err != nil {
				return err
			}
			if untilSettled {
				defer os.RemoveAll(dir)
			}
			if port != 0 && !portFree(port) {
				// Another drover holds the port: take any free one (in the
				// config, port 0 would turn the dashboard off).
				if p, err := anyFreePort(); err == nil {
					fmt.Fprintf(a.errw, "port %d is taken; the dashboard uses %d instead\n", port, p)
					port = p
				}
			}
			a.configPath = filepath.Join(dir, "WORKFLOW.md")
			if err := os.WriteFile(a.configPath, []byte(fmt.Sprintf(demoWorkflow, port)), 0o644); err != nil {
				return err
			}
			a.storeDSN = "sqlite:" + filepath.Join(dir, ".drover", "drover.db")
			if err := a.open(c.Context(), makesStore); err != nil {
				return err
			}
			if err := seedDemo(c.Context(), a.ops()); err != nil {
				return err
			}
			logLevel := "warn"
			if !untilSettled {
				logLevel = "info"
			}
			log, _ := newLogger(a.errw, "text", logLevel)
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if !a.asJSON {
				fmt.Fprintf(a.out, "demo board in %s with %d cards (store %s)\n", dir, len(demoCards), a.dsn())
			}
			a.announce = func(addr string) {
				if !a.asJSON {
					fmt.Fprintf(a.out, "dashboard: %s\n", addr)
				}
			}
			errc := make(chan error, 1)
			go func() { errc <- a.runServer(ctx, a.cfg.Full, log, nil) }()
			if !untilSettled {
				return <-errc
			}
			deadline := time.After(timeout)
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			last := ""
			for {
				select {
				case err := <-errc:
					return err
				case <-deadline:
					cancel()
					<-errc
					a.printDemo(c.Context())
					return fmt.Errorf("demo did not settle within %s", timeout)
				case <-tick.C:
				}
				settled, progress, err := demoSettled(c.Context(), a.st, a.cfg.Full.Board)
				if err != nil {
					return err
				}
				if progress != last && !a.asJSON {
					fmt.Fprintln(a.errw, "  "+progress)
					last = progress
				}
				if settled {
					cancel()
					if err := <-errc; err != nil {
						return err
					}
					return a.printDemo(c.Context())
				}
			}
		},
	}
	c.Flags().BoolVar(&untilSettled, "until-settled", false, "exit when every card has settled and print the outcome table")
	c.Flags().IntVar(&port, "port", 4840, "dashboard port on 127.0.0.1 (0 turns the dashboard off)")
	c.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "with --until-settled: give up after this long")
	return c
}

func portFree(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func anyFreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func seedDemo(ctx context.Context, ops *operator.Service) error {
	for _, dc := range demoCards {
		spec, _ := json.Marshal(dc.spec)
		raw := json.RawMessage(spec)
		title, body, ag := dc.title, dc.body, dc.agent
		in := operator.Input{Title: &title, Body: &body, Spec: &raw}
		if ag != "" {
			in.Agent = &ag
		}
		if _, err := ops.Add(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

// demoSettled is true when no card is eligible, scheduled or running.
func demoSettled(ctx context.Context, st store.Store, b board.Board) (bool, string, error) {
	cards, err := st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		return false, "", err
	}
	counts := map[string]int{}
	settled := true
	for _, c := range cards {
		counts[c.State]++
		switch b.RoleOf(c.State) {
		case board.RoleEligible, board.RoleRunning:
			settled = false
		}
		if c.Claim != nil {
			settled = false
		}
	}
	progress := ""
	for _, col := range b.Columns {
		if n := counts[col.Name]; n > 0 {
			progress += col.Name + ":" + strconv.Itoa(n) + " "
		}
	}
	return settled, progress, nil
}

func (a *app) demoRows(ctx context.Context) ([]DemoRow, error) {
	cards, err := a.st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		return nil, err
	}
	rows := []DemoRow{}
	for _, c := range cards {
		runs, err := a.st.ListRuns(ctx, store.RunFilter{CardID: c.ID})
		if err != nil {
			return nil, err
		}
		row := DemoRow{Identifier: c.Identifier, Title: c.Title, State: c.State, Attempts: len(runs), Reason: c.StateReason}
		if len(runs) > 0 {
			row.Kind = runs[len(runs)-1].Kind
		}
		if c.BlockReason != nil {
			row.Kind = c.BlockReason.Kind
			row.Reason = c.BlockReason.What
		}
		if c.GaveUp != nil {
			row.Kind = c.GaveUp.Kind
			row.Reason = fmt.Sprintf("gave up after %d attempts: %s", c.GaveUp.Attempts, c.GaveUp.Reason)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (a *app) printDemo(ctx context.Context) error {
	rows, err := a.demoRows(ctx)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printJSON(rows)
	}
	fmt.Fprintln(a.out)
	t := newTable(a.out, "CARD", "TITLE", "STATE", "ATTEMPTS", "KIND", "REASON")
	for _, r := range rows {
		t.row(r.Identifier, r.Title, r.State, strconv.Itoa(r.Attempts), r.Kind, excerpt.Line(r.Reason, 100))
	}
	return t.flush()
}
