package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
)

// table prints aligned columns.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	t.row(headers...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(strings.ReplaceAll(c, "\t", " "), "\n", " ")
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

func ts(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func dur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// pullLine is a card's pull request in words: number, state, branch, the
// last verdict of its checks and its address.
func pullLine(pr board.PullRequest) string {
	s := fmt.Sprintf("#%d %s, branch %s", pr.Number, pr.State, pr.Branch)
	if pr.HeadSHA != "" {
		s += " at " + shortSHA(pr.HeadSHA)
	}
	if len(pr.Handled.Checks) > 0 {
		s += fmt.Sprintf(", %s failing", plural(len(pr.Handled.Checks), "check"))
	}
	if pr.CheckedAt != nil {
		s += ", read " + ts(pr.CheckedAt)
	}
	return s + " (" + pr.URL + ")"
}

// printChanges writes, for each run with workspace.git, what it did to the
// card's branch.
func printChanges(w io.Writer, runs []board.Run) {
	first := true
	for _, r := range runs {
		if r.Changes == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nBranch")
			first = false
		}
		fmt.Fprintf(w, "  %s  %s\n", r.ID, changesLine(*r.Changes))
	}
}

// changesLine is one attempt's changes in words.
func changesLine(c board.Changes) string {
	s := fmt.Sprintf("%s: %s, %s (+%d -%d)", c.Branch, plural(len(c.Commits), "commit"), plural(c.Files, "file"), c.Insertions, c.Deletions)
	if !c.Changed() {
		s = c.Branch + ": nothing changed"
	}
	if c.Dirty {
		s += ", tree left dirty"
	}
	if c.CommittedBy != "" {
		s += ", committed by drover " + shortSHA(c.CommittedBy)
	}
	if c.Pushed != "" {
		s += ", pushed " + shortSHA(c.Pushed)
	}
	return s
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func runLine(r board.Run) []string {
	exit := "-"
	if r.ExitCode != nil {
		exit = fmt.Sprint(*r.ExitCode)
	}
	outcome := string(r.Outcome)
	if outcome == "" {
		outcome = "running"
	}
	counted := ""
	if r.Counted {
		counted = "counted"
	}
	elapsed := "-"
	if r.StartedAt != nil {
		end := time.Now()
		if r.FinishedAt != nil {
			end = *r.FinishedAt
		}
		elapsed = dur(end.Sub(*r.StartedAt))
	}
	return []string{r.ID, fmt.Sprintf("%d/e%d", r.Attempt, r.RetryEpoch), r.Agent, r.Node, outcome, r.Kind, counted, exit,
		elapsed, fmt.Sprintf("$%.4f", r.CostUSD), excerpt.Line(firstNonEmpty(r.Error, r.Decision), 70)}
}

// printLaunches writes, for each run that started a program, its id and
// what it ran: the command line (secrets redacted) and the variable names.
func printLaunches(w io.Writer, runs []board.Run) error {
	for _, r := range runs {
		if len(r.Argv) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s  %s\n", r.ID, agent.Launch{Argv: r.Argv, EnvNames: r.EnvNames}); err != nil {
			return err
		}
	}
	return nil
}

var runHeaders = []string{"RUN", "ATTEMPT", "AGENT", "NODE", "OUTCOME", "KIND", "COUNTED", "EXIT", "ELAPSED", "COST", "DETAIL"}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func (a *app) showCardText(c board.Card, runs []board.Run, events []board.Event, comments []board.Comment) error {
	w := a.out
	fmt.Fprintf(w, "%s  %s\n", c.Identifier, c.Title)
	fmt.Fprintf(w, "  id:          %s\n", c.ID)
	fmt.Fprintf(w, "  state:       %s", c.State)
	if c.StateReason != "" {
		fmt.Fprintf(w, " (%s)", c.StateReason)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  priority:    %s   agent: %s   retry epoch: %d\n", prio(c.Priority), firstNonEmpty(c.Agent, "(default)"), c.RetryEpoch)
	if e := c.External; e != nil {
		fmt.Fprintf(w, "  issue:       %s %s (%s)\n", e.Tracker, e.Key, e.URL)
	}
	if pr := c.PullRequest; pr != nil {
		fmt.Fprintf(w, "  pull:        %s\n", pullLine(*pr))
	}
	if len(c.Labels) > 0 {
		fmt.Fprintf(w, "  labels:      %s\n", strings.Join(c.Labels, ", "))
	}
	if len(c.BlockedBy) > 0 {
		fmt.Fprintf(w, "  waits on:    %s\n", strings.Join(c.BlockedBy, ", "))
	}
	if string(c.Spec) != "{}" && len(c.Spec) > 0 {
		fmt.Fprintf(w, "  spec:        %s\n", excerpt.Line(string(c.Spec), 200))
	}
	if c.Claim != nil {
		fmt.Fprintf(w, "  claim:       %s (epoch %d) until %s\n", c.Claim.Owner, c.Claim.Epoch, ts(&c.Claim.LeaseUntil))
	}
	if c.NextAttemptAt != nil {
		fmt.Fprintf(w, "  next try:    %s (in %s)\n", ts(c.NextAttemptAt), dur(time.Until(*c.NextAttemptAt)))
	}
	if b := c.BlockReason; b != nil {
		fmt.Fprintf(w, "\n  BLOCKED\n    what:  %s\n    where: %s\n    how:   %s\n", b.What, b.Where, b.How)
	}
	if g := c.GaveUp; g != nil {
		fmt.Fprintf(w, "  gave up:     after %d attempts (%s) on run %s at %s: %s\n", g.Attempts, g.Kind, g.RunID, ts(&g.At), g.Reason)
	}
	if c.Body != "" {
		fmt.Fprintf(w, "\n%s\n", indent(c.Body))
	}
	if len(runs) > 0 {
		fmt.Fprintln(w, "\nRuns")
		t := newTable(w, runHeaders...)
		for _, r := range runs {
			t.row(runLine(r)...)
		}
		t.flush()
		printChanges(w, runs)
	}
	if len(comments) > 0 {
		fmt.Fprintln(w, "\nComments")
		for _, cm := range comments {
			fmt.Fprintf(w, "  %s  %s:\n%s\n", ts(&cm.At), cm.Author, indent(cm.Body))
		}
	}
	if len(events) > 0 {
		fmt.Fprintln(w, "\nRecent events")
		for _, e := range events {
			fmt.Fprintf(w, "  %s  %-16s %-22s %s\n", ts(&e.At), e.Type, e.Actor, e.Reason)
		}
	}
	return nil
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
