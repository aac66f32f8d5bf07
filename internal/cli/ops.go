package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
)

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Running runs, the retry queue, counts, blocked and parked cards, agents, spend and errors",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// A refused WORKFLOW.md does not hide the board: serve keeps its
			// last good config, and status shows the board, the refusal among
			// its errors, and the attempt limits as unknown (not the
			// defaults the refused keys fall back to).
			if err := a.readBestEffort(c.Context()); err != nil {
				return err
			}
			refused := a.refused
			s, err := status.Snapshot(c.Context(), a.st, a.fullConfig(), time.Now())
			if err != nil {
				return err
			}
			if refused != nil {
				s.LimitsUnknown()
				at := a.cfg.Full.ModTime.UTC()
				s.Errors = append([]status.Error{{Code: "config_error", Source: "file:" + a.configPath,
					Message: refused.Error() + "; a running serve keeps its last good config, so this status shows attempt limits as unknown", Since: &at}}, s.Errors...)
			}
			if a.asJSON {
				return a.printJSON(s)
			}
			status.Render(a.out, s)
			return nil
		},
	}
}

func (a *app) explainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain ID",
		Short: "Why a card is or is not running, its attempts and budgets, and what happens next",
		Args:  exactArgs(1, "ID"),
		RunE: a.reading(func(c *cobra.Command, args []string) error {
			card, err := a.ops().Get(c.Context(), args[0])
			if err != nil {
				return err
			}
			e, err := dispatch.Explain(c.Context(), a.st, a.fullConfig(), card.ID, time.Now())
			if err != nil {
				return err
			}
			if a.refused != nil {
				e.Budgets = nil // the refused file's limits are not the board's
			}
			if a.asJSON {
				return a.printJSON(e)
			}
			w := a.out
			fmt.Fprintf(w, "%s  %s\n  state %s (%s), agent %s (%s), retry epoch %d\n", e.Identifier, e.Title, e.State, e.Role, e.Agent, e.AgentBy, e.RetryEpoch)
			if len(e.Fallback) > 0 {
				fmt.Fprintf(w, "  fallback %s → %s\n", e.Agent, strings.Join(e.Fallback, " → "))
			}
			if e.RunsOn != "" {
				fmt.Fprintf(w, "  runs on %s now: %s\n", e.RunsOn, e.RunsOnWhy)
			}
			fmt.Fprint(w, "\nChecks\n")
			for _, ch := range e.Checks {
				mark := "ok  "
				if !ch.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(w, "  %s %s", mark, ch.Name)
				if ch.Hint != "" {
					fmt.Fprintf(w, ": %s", ch.Hint)
				}
				fmt.Fprintln(w)
			}
			if len(e.History) > 0 {
				fmt.Fprintln(w, "\nAttempts in this retry epoch")
				t := newTable(w, "ATTEMPT", "OUTCOME", "KIND", "COUNTED", "DECISION")
				for _, h := range e.History {
					t.row(strconv.Itoa(h.Attempt), string(h.Outcome), h.Kind, strconv.FormatBool(h.Counted), excerpt.Line(h.Decision, 90))
				}
				t.flush()
			}
			fmt.Fprintln(w, "\nBudgets")
			if a.refused != nil {
				fmt.Fprintf(w, "  limits unknown: %s is invalid (see the warning); a running serve keeps its last good config\n", a.configPath)
			} else {
				fmt.Fprint(w, indent(policy.RenderBudgets(e.Budgets)))
			}
			fmt.Fprintln(w)
			if b := e.Block; b != nil {
				fmt.Fprintf(w, "\nBlocked\n  what:  %s\n  where: %s\n  how:   %s\n", b.What, b.Where, b.How)
			}
			if f := e.Fresh; f != nil {
				fmt.Fprintf(w, "\nWhat the next attempt has that attempt %d did not\n  %s\n", f.LastAttempt, f.Text)
			}
			fmt.Fprintf(w, "\nNext: %s\n", e.Next)
			return nil
		}),
	}
}

func (a *app) policyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "The failure policy"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "The effective failure policy: per kind the verb, cap, whether it counts, and the retry schedule",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig(a.configPath)
			if err != nil {
				return err
			}
			a.cfg = cfg
			pc := a.fullConfig().Policy
			if a.asJSON {
				return a.printJSON(map[string]any{"max_attempts": pc.MaxAttempts, "failed_state": pc.FailedState,
					"release_churn_cap": pc.ReleaseChurnCap, "continuation_cap": pc.ContinuationCap, "kinds": policy.ShowPolicy(pc)})
			}
			fmt.Fprint(a.out, policy.RenderPolicy(pc))
			return nil
		},
	})
	return cmd
}

// classifyKinds are the agent kinds `drover classify --agent` names in its
// help, in alphabetical order: those that run a program (the simulated
// agent prints Claude's output and is accepted too, but is nobody's real
// agent).
func classifyKinds() string {
	var out []string
	for _, k := range registry.Names() {
		if !registry.InProcess(k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func (a *app) classifyCmd() *cobra.Command {
	var agentName, stderrFile, killedFor string
	var exitCode int
	var explain bool
	c := &cobra.Command{
		Use:   "classify --agent NAME_OR_KIND [--exit-code N] [--stderr FILE] [--killed-for WHY] [--explain] < stdout",
		Short: "Classify an agent's output (read from stdin) the way the dispatcher does",
		Long: `Classify an agent's output (read from stdin) the way the dispatcher does.

It prints one JSON object: kind, message, source, retry_after_s (and
question, when the agent asked one). With --explain it says which signal
decided instead: a profile match rule, drover's own stop, a typed field of the
agent's structured output, the QUESTION: line ending a clean run's final
message, a clean exit with error text and no final message, an HTTP status,
an API error type, a gRPC code, a library error class or an errno in the
error text (a status and a type read together: the status wins where they
disagree), a phrase family (with the public corpus entries it was written
for), or the fallback (unknown). With --explain
--json the JSON object gains an "explain" field.`,
		Example: `  claude -p "fix it" --output-format stream-json --verbose > out.jsonl; echo $? 
  drover classify --agent claude --exit-code 1 < out.jsonl
  echo 'API Error: Unable to connect to API (ECONNRESET)' | drover classify --agent command --exit-code 1 --explain`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if agentName == "" {
				return usagef("--agent is required: a profile name or one of %s", classifyKinds())
			}
			kind, rules := agentName, []policy.Rule(nil)
			if cfg, err := loadConfig(a.configPath); err == nil && cfg.Full != nil {
				if p, ok := cfg.Full.Agents.Profile(agentName); ok {
					kind, rules = p.Kind, p.Match
				}
			}
			if _, ok := registry.Lookup(kind); !ok || kind == "" {
				return &board.InputError{Field: "agent", Msg: fmt.Sprintf("%q is neither a profile in %s nor one of %s", agentName, a.configPath, classifyKinds())}
			}
			stdout, err := io.ReadAll(io.LimitReader(c.InOrStdin(), 64<<20))
			if err != nil {
				return err
			}
			var stderr []byte
			if stderrFile != "" {
				if stderr, err = os.ReadFile(stderrFile); err != nil {
					return &board.InputError{Field: "stderr", Msg: err.Error()}
				}
			}
			sig := registry.BuildSignals(kind, exitCode, stdout, stderr, time.Now())
			switch killedFor {
			case "":
			case "timeout", "stall", "shutdown", "cancel", "spend":
				sig.KilledFor = killedFor
			default:
				return usagef("--killed-for: %q is not timeout, stall, shutdown, cancel or spend", killedFor)
			}
			cls := policy.Classify(sig, rules)
			out := map[string]any{"kind": cls.Kind, "retry_after_s": nil, "message": cls.Message, "source": cls.Source}
			if d := retryAfter(cls); d > 0 {
				out["retry_after_s"] = int(d.Seconds() + 0.5)
			}
			if !cls.RetryAt.IsZero() {
				out["retry_at"] = cls.RetryAt.UTC().Format(time.RFC3339)
			}
			if cls.Question != "" {
				out["question"] = cls.Question
			}
			why := policy.Explain(cls)
			if explain && !a.asJSON {
				printWhy(a.out, cls, why)
				return nil
			}
			if explain {
				out["explain"] = why
			}
			// classify always prints its JSON object: it is what scripts read.
			b, _ := json.Marshal(out)
			fmt.Fprintln(a.out, string(b))
			return nil
		},
	}
	c.Flags().StringVar(&agentName, "agent", "", "agent profile name, or a kind: "+strings.Join(registry.Names(), ", "))
	c.Flags().IntVar(&exitCode, "exit-code", 0, "the agent's exit code")
	c.Flags().StringVar(&stderrFile, "stderr", "", "a file holding the agent's stderr")
	c.Flags().BoolVar(&explain, "explain", false, "say which signal decided the kind (text; with --json, an \"explain\" field)")
	c.Flags().StringVar(&killedFor, "killed-for", "", "why the dispatcher stopped the run, as the dispatcher would say: timeout, stall, shutdown, cancel or spend")
	return c
}

// printWhy is classify --explain in words.
func printWhy(w io.Writer, c policy.Classification, why policy.Why) {
	fmt.Fprintf(w, "kind:       %s\n", c.Kind)
	fmt.Fprintf(w, "decided by: %s\n", why.Words)
	fmt.Fprintf(w, "signal:     %s", why.By)
	if why.Detail != "" {
		fmt.Fprintf(w, " %s", why.Detail)
	}
	fmt.Fprintln(w)
	if why.Phrase != "" {
		fmt.Fprintf(w, "rule:       phrase %s (evidence: %s)\n", why.Phrase, strings.Join(why.Evidence, ", "))
	}
	fmt.Fprintf(w, "source:     %s\n", c.Source)
	if c.Message != "" {
		fmt.Fprintf(w, "message:    %s\n", c.Message)
	}
}

func retryAfter(c policy.Classification) time.Duration {
	if !c.RetryAt.IsZero() {
		return time.Until(c.RetryAt)
	}
	return c.RetryAfter
}

func (a *app) agentCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Agent profiles and their breakers"}
	cmd.AddCommand(&cobra.Command{
		Use:   "ls",
		Short: "Each agent profile with its kind, command and breaker state",
		Args:  cobra.NoArgs,
		RunE: a.reading(func(c *cobra.Command, _ []string) error {
			states, err := a.st.ListAgentStates(c.Context())
			if err != nil {
				return err
			}
			byName := map[string]store.AgentState{}
			for _, s := range states {
				byName[s.Name] = s
			}
			type row struct {
				Name    string     `json:"name"`
				Kind    string     `json:"kind"`
				Command string     `json:"command"`
				Default bool       `json:"default"`
				State   string     `json:"state"`
				FailKnd string     `json:"kind_seen,omitempty"`
				Reason  string     `json:"reason"`
				Until   *time.Time `json:"until"`
				Probe   string     `json:"probe,omitempty"` // what a held profile's next probe tests
				// Fallback is the profile's chain; MaxConcurrent its cap of
				// live runs across the nodes (0: none).
				Fallback      []string `json:"fallback,omitempty"`
				MaxConcurrent int      `json:"max_concurrent,omitempty"`
			}
			cfg := a.fullConfig()
			var rows []row
			for _, name := range a.cfg.AgentNames {
				p, _ := cfg.Agents.Profile(name)
				if !registry.InProcess(p.Kind) {
					p.MaxTurns = cfg.Dispatch.MaxTurns
					p = registry.WithDefaults(p) // the command line as the dispatcher runs it
				}
				s := byName[name]
				st := s.State
				if st == "" {
					st = "closed"
				}
				var bs policy.BreakerState
				probe := ""
				if json.Unmarshal(s.Data, &bs) == nil && st != policy.BreakerClosed {
					probe = bs.ProbeTests()
				}
				rows = append(rows, row{name, p.Kind, strings.TrimSpace(p.Command + " " + strings.Join(p.Args, " ")), name == cfg.Agents.Default, st, s.Kind, s.Reason, s.Until, probe,
					cfg.Agents.Fallback[name], cfg.Agents.MaxConcurrent[name]})
			}
			if a.asJSON {
				return a.printJSON(rows)
			}
			t := newTable(a.out, "PROFILE", "KIND", "STATE", "UNTIL", "WHY", "COMMAND")
			for _, r := range rows {
				name := r.Name
				if r.Default {
					name += " (default)"
				}
				t.row(name, r.Kind, r.State, ts(r.Until), excerpt.Line(r.Reason, 60), r.Command)
			}
			if err := t.flush(); err != nil {
				return err
			}
			for _, r := range rows {
				if r.Probe != "" {
					fmt.Fprintf(a.out, "\n%s is held: %s\n  the next probe tests %s\n", r.Name, r.Reason, r.Probe)
				}
				if len(r.Fallback) > 0 {
					fmt.Fprintf(a.out, "\n%s falls back to %s while it is held\n", r.Name, strings.Join(r.Fallback, ", then "))
				}
			}
			return nil
		}),
	}, &cobra.Command{
		Use:   "resume NAME",
		Short: "Close a paused or open agent profile's breaker so its cards are dispatched again",
		Args:  exactArgs(1, "NAME"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			s, err := a.ops().ResumeAgent(c.Context(), args[0])
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(s)
			}
			fmt.Fprintf(a.out, "agent %s resumed\n", args[0])
			return nil
		}),
	})
	return cmd
}
