package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drover-dev/drover/internal/excerpt"
)

// Render writes the text form of `drover status`: running runs, the retry
// queue, counts by column, blocked and parked cards, agents that are not
// closed, spend, errors and the nodes' last ticks.
func Render(w io.Writer, s State) {
	now := s.GeneratedAt
	fmt.Fprintf(w, "drover status at %s\n", now.Format(time.RFC3339))

	var rows []string
	for _, r := range s.Running {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t$%.2f\t%s\t%s", r.IssueIdentifier, r.Agent, attempts(r.Attempt, r.Counted, r.MaxAttempts),
			Dur(time.Duration(r.ElapsedS*float64(time.Second))), r.Tokens.TotalTokens, r.CostUSD, r.Node, excerpt.Line(r.LastOutput, 60)))
	}
	table(w, fmt.Sprintf("RUNNING (%d)", len(s.Running)), "nothing running", "CARD\tAGENT\tATTEMPT\tELAPSED\tTOKENS\tCOST\tNODE\tLAST OUTPUT", rows)
	if len(s.Running) > 0 {
		l := s.AgentLimits
		var parts []string
		for _, r := range s.Running {
			parts = append(parts, fmt.Sprintf("%s %s comments, %s notes", r.IssueIdentifier, ofCap(r.AgentComments, l.CommentsPerRun), ofCap(r.AgentProgress, l.ProgressPerRun)))
		}
		fmt.Fprintf(w, "  agent writes this run (limits.agent_*): %s\n", strings.Join(parts, " · "))
	}
	rows = nil
	for _, r := range s.Retrying {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.IssueIdentifier, attempts(r.Attempt, r.Counted, r.MaxAttempts), dash(r.Kind),
			Dur(r.DueAt.Sub(now)), excerpt.Line(r.Error, 70)))
	}
	table(w, fmt.Sprintf("RETRY QUEUE (%d)", len(s.Retrying)), "empty", "CARD\tNEXT ATTEMPT\tKIND\tDUE IN\tERROR", rows)

	section(w, "COLUMNS")
	var parts []string
	for _, c := range s.Columns {
		parts = append(parts, fmt.Sprintf("%s %d", c.Name, c.Count))
	}
	fmt.Fprintf(w, "  %s  (total %d)\n", strings.Join(parts, " · "), s.Counts.Cards)

	if s.Counts.Blocked > 0 {
		section(w, fmt.Sprintf("BLOCKED (%d)", s.Counts.Blocked))
		for _, b := range s.Blocked {
			fmt.Fprintf(w, "  %s  %s\n", b.Identifier, excerpt.Line(b.Title, 70))
			if b.GaveUp != nil {
				fmt.Fprintf(w, "      gave up after %d attempts: %s\n", b.GaveUp.Attempts, b.GaveUp.Kind)
			}
			if br := b.BlockReason; br != nil {
				fmt.Fprintf(w, "      what:  %s\n      where: %s\n      how:   %s\n", br.What, br.Where, br.How)
			} else if b.StateReason != "" {
				fmt.Fprintf(w, "      why:   %s\n", b.StateReason)
			}
		}
		if more := s.Counts.Blocked - len(s.Blocked); more > 0 {
			fmt.Fprintf(w, "  … and %d more (drover card ls --state blocked)\n", more)
		}
	}
	if s.Counts.Parked > 0 {
		section(w, fmt.Sprintf("AWAITING AN ANSWER (%d)", s.Counts.Parked))
		for _, p := range s.Parked {
			fmt.Fprintf(w, "  %s  %s\n      asks: %s\n      answer: drover card answer %s TEXT\n", p.Identifier, excerpt.Line(p.Title, 70), excerpt.Line(p.Question, 200), p.Identifier)
		}
	}

	var notClosed []Agent
	for _, a := range s.Agents {
		if a.State != "closed" {
			notClosed = append(notClosed, a)
		}
	}
	section(w, fmt.Sprintf("AGENTS (%d, %d not closed)", len(s.Agents), len(notClosed)))
	for _, a := range notClosed {
		until := ""
		if a.Until != nil {
			until = " until " + a.Until.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %s: %s%s — %s\n", a.Name, a.State, until, a.Reason)
		if a.Probe != "" {
			fmt.Fprintf(w, "      the next probe tests %s\n", a.Probe)
		}
		if len(a.Fallback) > 0 {
			fmt.Fprintf(w, "      its cards run on the first free of %s meanwhile\n", strings.Join(a.Fallback, ", "))
		}
		if a.State == "paused" {
			fmt.Fprintf(w, "      resume: drover agent resume %s\n", a.Name)
		}
	}
	if len(notClosed) == 0 {
		fmt.Fprintln(w, "  all closed (dispatching)")
	}

	section(w, "SPEND")
	fmt.Fprintf(w, "  today $%.2f", s.Spend.TodayUSD)
	if s.Spend.DayCapUSD > 0 {
		fmt.Fprintf(w, " of $%.2f per day", s.Spend.DayCapUSD)
	}
	if s.Spend.PerCardCapUSD > 0 {
		fmt.Fprintf(w, " · per card cap $%.2f", s.Spend.PerCardCapUSD)
	}
	if s.Spend.DayCapUSD > 0 {
		est := "unknown"
		if s.Spend.EstimateSource != "unknown" {
			est = fmt.Sprintf("$%.2f (%s)", s.Spend.EstimateUSD, s.Spend.EstimateSource)
		}
		fmt.Fprintf(w, "\n  reserved $%.2f for %d run(s) in flight · estimate per run %s", s.Spend.ReservedUSD, s.Spend.RunningToday, est)
	}
	if s.Spend.Paused {
		fmt.Fprintf(w, "\n  DISPATCH PAUSED until %s: %s", s.Spend.NextDayStart.Format("2006-01-02 15:04 UTC"), s.Spend.Reason)
	} else if s.Spend.Reason != "" {
		fmt.Fprintf(w, "\n  %s", s.Spend.Reason)
	}
	fmt.Fprintf(w, "\n  tokens today %d in / %d out over %d runs\n", s.CodexTotals.InputTokens, s.CodexTotals.OutputTokens, s.CodexTotals.Runs)

	if len(s.Errors) > 0 {
		section(w, fmt.Sprintf("ERRORS (%d)", len(s.Errors)))
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %s [%s]: %s\n", e.Code, e.Source, e.Message)
		}
	}

	section(w, "NODES")
	if len(s.Nodes) == 0 {
		fmt.Fprintln(w, "  no dispatcher has run against this store (drover serve starts one)")
	}
	for _, n := range s.Nodes {
		tick := "never ticked"
		if n.LastTick != nil {
			tick = "last tick " + Dur(now.Sub(*n.LastTick)) + " ago"
		}
		stale := ""
		if n.Stale {
			stale = " · STALE (not seen for " + Dur(now.Sub(n.SeenAt)) + ")"
		}
		fmt.Fprintf(w, "  %s (pid %d): %d running · %s%s\n", n.Name, n.PID, n.Running, tick, stale)
	}
	renderRetention(w, s.Retention, now)
}

// table writes a section: none when there are no rows, else the header
// and the rows (tab-separated) in aligned columns.
func table(w io.Writer, title, none, header string, rows []string) {
	section(w, title)
	if len(rows) == 0 {
		fmt.Fprintln(w, "  "+none)
		return
	}
	tw := tab(w)
	for _, r := range append([]string{header}, rows...) {
		fmt.Fprintln(tw, "  "+r)
	}
	tw.Flush()
}

func section(w io.Writer, title string) { fmt.Fprintf(w, "\n%s\n", title) }

func tab(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// attempts is attempt n against max_attempts: "3/5" when every earlier
// attempt counted, else the counted number first with the attempt beside it
// ("2/2 (attempt 3)" after an interrupted run), so the figure never passes
// the cap.
func attempts(n, counted, max int) string {
	switch {
	case max == LimitUnknown && counted >= n-1:
		return fmt.Sprintf("%d, limit unknown", n)
	case max == LimitUnknown:
		return fmt.Sprintf("%d (attempt %d), limit unknown", counted+1, n)
	case max < 0:
		return fmt.Sprintf("%d", n)
	case counted >= n-1:
		return fmt.Sprintf("%d/%d", n, max)
	}
	return fmt.Sprintf("%d/%d (attempt %d)", counted+1, max, n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Dur formats a duration compactly: 45s, 3m05s, 2h10m, 3d4h. Negative
// durations read as "now".
func Dur(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// ofCap is "n/cap", or n alone when there is no cap.
func ofCap(n, cap int) string {
	if cap < 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d/%d", n, cap)
}
