package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

func (a *app) boardCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "board", Short: "The board's columns"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Columns with their roles and card counts",
		Args:  cobra.NoArgs,
		RunE: a.reading(func(c *cobra.Command, _ []string) error {
			counts, err := a.st.CountByState(c.Context())
			if err != nil {
				return err
			}
			type col struct {
				Name  string     `json:"name"`
				Role  board.Role `json:"role"`
				Count int        `json:"count"`
				Sink  bool       `json:"sink"`
			}
			out := struct {
				Prefix  string         `json:"prefix"`
				Columns []col          `json:"columns"`
				Other   map[string]int `json:"other_states,omitempty"`
			}{Prefix: a.cfg.Board.Prefix}
			for _, cl := range a.cfg.Board.Columns {
				out.Columns = append(out.Columns, col{cl.Name, cl.Role, counts[cl.Name], cl.Role.IsSink()})
				delete(counts, cl.Name)
			}
			if len(counts) > 0 {
				out.Other = counts // cards in states the board no longer has
			}
			if a.asJSON {
				return a.printJSON(out)
			}
			t := newTable(a.out, "COLUMN", "ROLE", "CARDS", "")
			for _, cl := range out.Columns {
				note := ""
				if cl.Sink {
					note = "sink: only an operator moves cards out"
				}
				t.row(cl.Name, string(cl.Role), strconv.Itoa(cl.Count), note)
			}
			for s, n := range out.Other {
				t.row(s, "(not on the board)", strconv.Itoa(n), "move these cards with drover card mv")
			}
			return t.flush()
		}),
	})
	return cmd
}

func (a *app) eventsCmd() *cobra.Command {
	var cardRef, since string
	var limit int
	c := &cobra.Command{
		Use:   "events",
		Short: "The audit log: every transition with who, what, when and why",
		Long:  "The audit log. --since takes an event sequence number (the cursor printed in the SEQ column) or an RFC 3339 time.",
		Args:  cobra.NoArgs,
		RunE: a.reading(func(c *cobra.Command, _ []string) error {
			f := store.EventFilter{Limit: limit}
			if cardRef != "" {
				card, err := a.ops().Get(c.Context(), cardRef)
				if err != nil {
					return err
				}
				f.CardID = card.ID
			}
			if since != "" {
				if n, err := strconv.ParseInt(since, 10, 64); err == nil {
					f.SinceSeq = n
				} else if t, err := time.Parse(time.RFC3339, since); err == nil {
					f.Since = &t
				} else {
					return &board.InputError{Field: "since", Msg: fmt.Sprintf("%q is neither an event number nor an RFC 3339 time (e.g. 2026-11-29T10:00:00Z)", since)}
				}
			}
			evs, err := a.st.ListEvents(c.Context(), f)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(evs)
			}
			t := newTable(a.out, "SEQ", "AT", "CARD", "TYPE", "ACTOR", "REASON")
			for _, e := range evs {
				t.row(strconv.FormatInt(e.Seq, 10), ts(&e.At), a.identOf(c, e.CardID), e.Type, e.Actor, excerpt.Line(e.Reason, 90))
			}
			return t.flush()
		}),
	}
	c.Flags().StringVar(&cardRef, "card", "", "only events of this card")
	c.Flags().StringVar(&since, "since", "", "only events after this cursor (sequence number) or time")
	c.Flags().IntVar(&limit, "limit", 0, "at most this many events")
	return c
}

// identOf maps a card id to its identifier for display (cached per command).
func (a *app) identOf(c *cobra.Command, id string) string {
	if id == "" {
		return "-"
	}
	if a.idents == nil {
		a.idents = map[string]string{}
	}
	if v, ok := a.idents[id]; ok {
		return v
	}
	v := id
	if card, err := a.st.GetCard(c.Context(), id); err == nil {
		v = card.Identifier
	}
	a.idents[id] = v
	return v
}

func (a *app) runsCmd() *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "runs [ID]",
		Short: "Run history, newest first (of one card when ID is given, with each run's command line)",
		Long: `Run history, newest first. Given a card ID, every run of that card, oldest
first, and below the table the command line each run ran (secrets redacted)
and the names of the environment variables it was given; --json carries them
as argv and env_names on every run.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.reading(func(c *cobra.Command, args []string) error {
			f := store.RunFilter{Newest: true, Limit: limit}
			if len(args) == 1 {
				card, err := a.ops().Get(c.Context(), args[0])
				if err != nil {
					return err
				}
				f = store.RunFilter{CardID: card.ID}
			}
			runs, err := a.st.ListRuns(c.Context(), f)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(runs)
			}
			t := newTable(a.out, append([]string{"CARD"}, runHeaders...)...)
			for _, r := range runs {
				t.row(append([]string{a.identOf(c, r.CardID)}, runLine(r)...)...)
			}
			if err := t.flush(); err != nil || len(args) == 0 {
				return err
			}
			return printLaunches(a.out, runs)
		}),
	}
	c.Flags().IntVar(&limit, "limit", 50, "at most this many runs (all runs of a card are shown)")
	return c
}

// logLine is one line of a run's log in drover logs --json.
type logLine struct {
	RunID string `json:"run_id"`
	N     int    `json:"n"`
	Line  string `json:"line"`
}

func (a *app) logsCmd() *cobra.Command {
	var follow bool
	c := &cobra.Command{
		Use:   "logs RUN",
		Short: "Print a run's captured output (-f follows it while the run is live)",
		Long: `Print a run's captured output (-f follows it while the run is live). Escape
sequences and control characters the agent wrote are removed on the way to the
terminal; the log file itself (log_path in drover runs --json) is verbatim.
With --json each line is one JSON object, {"run_id", "n", "line"} (JSON lines).`,
		Args: exactArgs(1, "RUN"),
		RunE: a.reading(func(c *cobra.Command, args []string) error {
			r, err := a.st.GetRun(c.Context(), args[0])
			if errors.Is(err, store.ErrNotFound) {
				return &board.InputError{Field: "RUN", Msg: fmt.Sprintf("run %q not found; drover runs lists run ids", args[0])}
			}
			if err != nil {
				return err
			}
			if r.LogPath == "" {
				return fmt.Errorf("run %s has no log yet (outcome %q: the agent never started)", r.ID, r.Outcome)
			}
			f, err := os.Open(r.LogPath)
			if err != nil {
				return fmt.Errorf("run %s: log %s: %v", r.ID, r.LogPath, err)
			}
			defer f.Close()
			// With --json each line is one JSON object (JSON lines), so a
			// follower can parse the output as it comes.
			n := 0
			emit := func(line string) error {
				if !a.asJSON {
					_, err := io.WriteString(a.out, line)
					return err
				}
				n++
				b, err := json.Marshal(logLine{RunID: r.ID, N: n, Line: strings.TrimSuffix(line, "\n")})
				if err != nil {
					return err
				}
				_, err = io.WriteString(a.jsonOut, escapeC1(string(b))+"\n")
				return err
			}
			rd := bufio.NewReader(f)
			partial := ""
			notes := &agentNotes{st: a.st, run: r}
			for {
				line, err := rd.ReadString('\n')
				switch {
				case err == nil:
					if err := emit(partial + line); err != nil {
						return err
					}
					partial = ""
					continue
				case err != io.EOF:
					return err
				}
				partial += line
				// What the agent said through drover mcp (comments, progress,
				// its report) joins the output as it arrives.
				for _, l := range notes.next(c.Context()) {
					if err := emit(l); err != nil {
						return err
					}
				}
				if follow {
					// Follow until the run has an outcome, then read what is left.
					cur, gerr := a.st.GetRun(c.Context(), r.ID)
					if gerr == nil && cur.Open() {
						select {
						case <-c.Context().Done():
							return nil
						case <-time.After(300 * time.Millisecond):
						}
						continue
					}
					follow = false
					continue
				}
				if partial != "" {
					return emit(partial)
				}
				return nil
			}
		}),
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output until the run ends")
	return c
}
