package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// cardFlags are the flags shared by card add and card edit.
type cardFlags struct {
	title, body, bodyFile, state, agent, spec, specFile string
	priority                                            int
	labels, blockedBy                                   []string
}

func (f *cardFlags) register(c *cobra.Command, withState bool) {
	fl := c.Flags()
	fl.StringVar(&f.title, "title", "", "title (one line, at most 500 characters)")
	fl.StringVar(&f.body, "body", "", "body in markdown (at most 1 MiB)")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the body from a file (- for stdin)")
	if withState {
		fl.StringVar(&f.state, "state", "", "column to create the card in (default: the first eligible column)")
	}
	fl.IntVar(&f.priority, "priority", 0, "1 (highest) to 4; 0 for none")
	fl.StringArrayVar(&f.labels, "label", nil, "label (repeatable)")
	fl.StringVar(&f.agent, "agent", "", "agent profile that runs the card (default: agents.default)")
	fl.StringVar(&f.spec, "spec", "", "structured input as a JSON object")
	fl.StringVar(&f.specFile, "spec-file", "", "read the spec JSON from a file (- for stdin)")
	fl.StringArrayVar(&f.blockedBy, "blocked-by", nil, "id, identifier or tracker key (ENG-12, acme/app#7) of a card this one waits on (repeatable)")
}

// input turns the flags the user actually set into an operator.Input.
func (f *cardFlags) input(c *cobra.Command) (operator.Input, error) {
	var in operator.Input
	ch := c.Flags().Changed
	if ch("body") && ch("body-file") {
		return in, usagef("--body and --body-file: give one of them")
	}
	if ch("spec") && ch("spec-file") {
		return in, usagef("--spec and --spec-file: give one of them")
	}
	if ch("title") {
		in.Title = &f.title
	}
	if ch("body") {
		in.Body = &f.body
	}
	if ch("body-file") {
		b, err := readInput("body-file", f.bodyFile, c.InOrStdin())
		if err != nil {
			return in, err
		}
		s := string(b)
		in.Body = &s
	}
	if ch("state") {
		in.State = &f.state
	}
	if ch("priority") {
		in.Priority = &f.priority
	}
	if ch("label") {
		in.Labels = &f.labels
	}
	if ch("agent") {
		in.Agent = &f.agent
	}
	if ch("spec") {
		raw := json.RawMessage(f.spec)
		in.Spec = &raw
	}
	if ch("spec-file") {
		b, err := readInput("spec-file", f.specFile, c.InOrStdin())
		if err != nil {
			return in, err
		}
		raw := json.RawMessage(b)
		in.Spec = &raw
	}
	if ch("blocked-by") {
		in.BlockedBy = &f.blockedBy
	}
	return in, nil
}

// readInput reads a file (or stdin for "-") with a size cap.
func readInput(field, path string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, &board.InputError{Field: field, Msg: fmt.Sprintf("cannot read %s: %v", path, err)}
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, board.MaxBody+1))
	if err != nil {
		return nil, &board.InputError{Field: field, Msg: err.Error()}
	}
	if len(b) > board.MaxBody {
		return nil, &board.InputError{Field: field, Msg: fmt.Sprintf("%s is larger than 1 MiB", path)}
	}
	return b, nil
}

func (a *app) cardCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "card", Short: "Create, list, show and change cards",
		Long: `Create, list, show and change cards.

Wherever a command takes a card ID (here, and drover explain, runs, events
--card), it takes the card's id, its identifier (DRV-12), or the key of the
tracker issue it mirrors (ENG-12, acme/app#7), tried in that order, in any
case. A key that cards of two trackers share is refused naming both.`}
	cmd.AddCommand(a.cardAddCmd(), a.cardLsCmd(), a.cardShowCmd(), a.cardEditCmd(), a.cardMvCmd(), a.cardCommentCmd())
	cmd.AddCommand(a.cardActionCmds()...)
	return cmd
}

func (a *app) cardAddCmd() *cobra.Command {
	var f cardFlags
	c := &cobra.Command{
		Use:   "add --title T [flags]",
		Short: "Create a card and print it",
		Example: `  drover card add --title "Fix login" --label bug --priority 2
  drover card add --title "Port the parser" --agent claude --spec '{"plan":"docs/plan.md"}'`,
		Args: cobra.NoArgs,
		RunE: a.withStore(func(c *cobra.Command, _ []string) error {
			in, err := f.input(c)
			if err != nil {
				return err
			}
			card, err := a.ops().Add(c.Context(), in)
			if err != nil {
				return err
			}
			return a.printCard(card)
		}),
	}
	f.register(c, true)
	return c
}

func (a *app) cardEditCmd() *cobra.Command {
	var f cardFlags
	c := &cobra.Command{
		Use:     "edit ID [flags]",
		Short:   "Change a card's fields (a changed spec opens a new retry epoch)",
		Example: `  drover card edit DRV-7 --spec-file plan.json && drover card resume DRV-7`,
		Args:    exactArgs(1, "ID"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			in, err := f.input(c)
			if err != nil {
				return err
			}
			if in == (operator.Input{}) {
				return usagef("card edit: nothing to change; pass at least one of --title --body --priority --label --agent --spec --blocked-by")
			}
			card, err := a.ops().Edit(c.Context(), args[0], in)
			if err != nil {
				return err
			}
			return a.printCard(card)
		}),
	}
	f.register(c, false)
	return c
}

func (a *app) cardLsCmd() *cobra.Command {
	var states []string
	var label, agentName, query string
	var limit int
	c := &cobra.Command{
		Use:   "ls",
		Short: "List cards in board order (priority, then age)",
		Args:  cobra.NoArgs,
		RunE: a.reading(func(c *cobra.Command, _ []string) error {
			for _, s := range states {
				if _, ok := a.cfg.Board.Column(s); !ok {
					return &board.InputError{Field: "state", Msg: a.cfg.Board.StateError("state", s).Error()[len("state: "):]}
				}
			}
			cards, err := a.st.ListCards(c.Context(), store.CardFilter{States: states, Label: label, Agent: agentName, Query: query, Limit: limit})
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(cards)
			}
			holds, err := a.profileHolds(c.Context())
			if err != nil {
				return err
			}
			t := newTable(a.out, "ID", "STATE", "PRI", "AGENT", "TITLE", "NOTE")
			for _, cd := range cards {
				t.row(cd.Identifier, cd.State, prio(cd.Priority), cd.Agent, excerpt.Line(cd.Title, 60), a.cardNote(cd, holds))
			}
			return t.flush()
		}),
	}
	c.Flags().StringArrayVar(&states, "state", nil, "only cards in this column (repeatable)")
	c.Flags().StringVar(&label, "label", "", "only cards with this label")
	c.Flags().StringVar(&agentName, "agent", "", "only cards for this agent profile")
	c.Flags().StringVar(&query, "query", "", "only cards whose title contains this text (or this identifier)")
	c.Flags().IntVar(&limit, "limit", 0, "at most this many cards")
	return c
}

func (a *app) cardShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one card with its runs, comments and recent events",
		Args:  exactArgs(1, "ID"),
		RunE: a.reading(func(c *cobra.Command, args []string) error {
			card, err := a.ops().Get(c.Context(), args[0])
			if err != nil {
				return err
			}
			runs, err := a.st.ListRuns(c.Context(), store.RunFilter{CardID: card.ID})
			if err != nil {
				return err
			}
			events, err := a.st.ListEvents(c.Context(), store.EventFilter{CardID: card.ID, Limit: 50, Newest: true})
			if err != nil {
				return err
			}
			comments, err := a.st.ListComments(c.Context(), card.ID)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(struct {
					board.Card
					Runs     []board.Run     `json:"runs"`
					Events   []board.Event   `json:"events"`
					Comments []board.Comment `json:"comments"`
				}{card, runs, events, comments})
			}
			return a.showCardText(card, runs, events, comments)
		}),
	}
}

func (a *app) cardMvCmd() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "mv ID STATE",
		Short: "Move a card to another column (sinks are left only with resume or reopen)",
		Args:  exactArgs(2, "ID STATE"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			card, err := a.ops().Move(c.Context(), args[0], args[1], reason)
			if err != nil {
				return err
			}
			return a.printCard(card)
		}),
	}
	c.Flags().StringVar(&reason, "reason", "", "why (recorded in the event log)")
	return c
}

func (a *app) cardCommentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "comment ID TEXT",
		Short: "Add a comment to a card",
		Args:  exactArgs(2, "ID TEXT"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			cm, err := a.ops().Comment(c.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(cm)
			}
			fmt.Fprintf(a.out, "commented on %s\n", args[0])
			return nil
		}),
	}
}

// cardActionCmds are the operator actions: block, resume, reopen, cancel, answer.
func (a *app) cardActionCmds() []*cobra.Command {
	var blockReason, cancelReason string
	block := &cobra.Command{
		Use: "block ID --reason R", Short: "Block a card with a reason (automation never takes it out)",
		Args: exactArgs(1, "ID"),
		RunE: a.action(func(c *cobra.Command, s *operator.Service, args []string) (board.Card, error) {
			return s.Block(c.Context(), args[0], blockReason)
		}),
	}
	block.Flags().StringVar(&blockReason, "reason", "", "why the card is blocked (required)")
	resume := &cobra.Command{
		Use: "resume ID", Short: "Move a blocked, cancelled or parked card back to eligible with a fresh retry budget",
		Args: exactArgs(1, "ID"),
		RunE: a.action(func(c *cobra.Command, s *operator.Service, args []string) (board.Card, error) {
			return s.Resume(c.Context(), args[0])
		}),
	}
	reopen := &cobra.Command{
		Use: "reopen ID", Short: "Move a done or completed card back to eligible with a fresh retry budget",
		Args: exactArgs(1, "ID"),
		RunE: a.action(func(c *cobra.Command, s *operator.Service, args []string) (board.Card, error) {
			return s.Reopen(c.Context(), args[0])
		}),
	}
	cancel := &cobra.Command{
		Use: "cancel ID", Short: "Cancel a card (a running agent is stopped)",
		Args: exactArgs(1, "ID"),
		RunE: a.action(func(c *cobra.Command, s *operator.Service, args []string) (board.Card, error) {
			return s.Cancel(c.Context(), args[0], cancelReason)
		}),
	}
	cancel.Flags().StringVar(&cancelReason, "reason", "", "why (recorded in the event log)")
	answer := &cobra.Command{
		Use: "answer ID TEXT", Short: "Answer a parked card's question; it becomes eligible again",
		Args: exactArgs(2, "ID TEXT"),
		RunE: a.action(func(c *cobra.Command, s *operator.Service, args []string) (board.Card, error) {
			return s.Answer(c.Context(), args[0], args[1])
		}),
	}
	return []*cobra.Command{block, resume, reopen, cancel, answer}
}

func (a *app) action(fn func(*cobra.Command, *operator.Service, []string) (board.Card, error)) func(*cobra.Command, []string) error {
	return a.withStore(func(c *cobra.Command, args []string) error {
		card, err := fn(c, a.ops(), args)
		if err != nil {
			return err
		}
		return a.printCard(card)
	})
}

func (a *app) printCard(c board.Card) error {
	if a.asJSON {
		return a.printJSON(c)
	}
	fmt.Fprintf(a.out, "%s  %s  [%s]\n", c.Identifier, c.Title, c.State)
	holds, _ := a.profileHolds(context.Background())
	if n := a.cardNote(c, holds); n != "" {
		fmt.Fprintf(a.out, "  %s\n", n)
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a message that says what is expected.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d argument(s)); see %s --help", c.CommandPath(), names, len(args), c.CommandPath())
		}
		return nil
	}
}

func prio(p int) string {
	if p == 0 {
		return "-"
	}
	return "P" + strconv.Itoa(p)
}

// cardNote is the one-line status a person needs next to a card. holds
// (from profileHolds) says which agent profiles hold their eligible cards
// back; such a card is deferred, and the note says why and until when.
func (a *app) cardNote(c board.Card, holds map[string]string) string {
	profile := c.Agent
	if profile == "" {
		profile = a.fullConfig().Agents.Default
	}
	switch {
	case c.GaveUp != nil:
		return fmt.Sprintf("gave up after %d attempts: %s", c.GaveUp.Attempts, c.GaveUp.Kind)
	case c.BlockReason != nil:
		return "blocked: " + excerpt.Line(c.BlockReason.What, 80)
	case c.Claim != nil:
		return "claimed by " + c.Claim.Owner
	case holds[profile] != "" && a.cfg.Board.RoleOf(c.State) == board.RoleEligible:
		return holds[profile]
	case c.NextAttemptAt != nil:
		return "next attempt " + c.NextAttemptAt.Local().Format("15:04:05")
	}
	return ""
}

// profileHolds returns, for each agent profile whose breaker holds its
// cards back (paused, open or half-open), the note for a card waiting on
// it: "deferred: profile claude paused (auth_failed); fix it, then drover
// agent resume claude".
func (a *app) profileHolds(ctx context.Context) (map[string]string, error) {
	states, err := a.st.ListAgentStates(ctx)
	if err != nil {
		return nil, err
	}
	holds := map[string]string{}
	for _, s := range states {
		kind := ""
		if s.Kind != "" {
			kind = " (" + s.Kind + ")"
		}
		switch s.State {
		case policy.BreakerPaused:
			holds[s.Name] = fmt.Sprintf("deferred: profile %s paused%s; fix it, then drover agent resume %s", s.Name, kind, s.Name)
		case policy.BreakerOpen:
			holds[s.Name] = fmt.Sprintf("deferred: profile %s open%s until %s", s.Name, kind, ts(s.Until))
		case policy.BreakerHalfOpen:
			holds[s.Name] = fmt.Sprintf("deferred: profile %s half-open%s: one probe run decides", s.Name, kind)
		}
	}
	return holds, nil
}
