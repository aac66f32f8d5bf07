package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/status"
)

// viewFuncs are the template helpers that turn store words into what an
// operator reads.
var viewFuncs = map[string]any{
	"cmd":     commandIn,
	"health":  healthLabel,
	"extkey":  externalKey,
	"span":    spanText,
	"runtime": runDuration,
	"when":    whenText,
}

// commandIn is the `drover …` command a block reason's "how" names, so the
// page can offer it to copy: from "drover " and one of drover's commands to
// the end of its clause (a "; " or ", ", a sentence's final ".", a closing
// backtick), or "" when it names none.
func commandIn(how string) string {
	for rest := how; ; {
		i := strings.Index(rest, "drover ")
		if i < 0 {
			return ""
		}
		c := rest[i:]
		rest = rest[i+len("drover "):]
		if word, _, _ := strings.Cut(rest, " "); !droverCommands[strings.Trim(word, "`.,;")] {
			continue
		}
		for _, stop := range []string{"; ", ", ", ". ", " (", "`", "\n"} {
			if j := strings.Index(c, stop); j > 0 {
				c = c[:j]
			}
		}
		return strings.TrimRight(strings.TrimSpace(c), ".;,")
	}
}

// droverCommands are drover's top-level commands (internal/cli): a
// "drover" in prose followed by anything else is not a command.
var droverCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields("agent backup bench board card classify demo events explain gc init logs mcp outbox policy restore run runs serve status store version") {
		droverCommands[c] = true
	}
}

// healthLabel is what a profile's breaker state means to an operator:
// "closed" is the healthy state (runs flow), so it reads "healthy"; the
// breaker word stays in the badge's tooltip.
func healthLabel(state string) string {
	switch state {
	case "closed", "":
		return "healthy"
	case "open":
		return "held"
	case "half_open":
		return "probing"
	}
	return state
}

// externalKey is how people name the tracker issue a card mirrors
// (acme/app#7, ENG-12), or "" for a card of drover's own board.
func externalKey(e *board.External) string {
	switch {
	case e == nil:
		return ""
	case e.Key != "":
		return e.Key
	case e.Tracker == "github":
		return "#" + e.ID
	}
	return e.Tracker + " " + e.ID
}

// spanText is "first–last of total" for a page of n items from offset:
// "1 of 1", "1–50 of 120", "none" for an empty list.
func spanText(offset, n, total int) string {
	switch {
	case n == 0 && total == 0:
		return "none"
	case n == 0:
		return fmt.Sprintf("none here (of %d)", total)
	case n == 1:
		return fmt.Sprintf("%d of %d", offset+1, total)
	}
	return fmt.Sprintf("%d–%d of %d", offset+1, offset+n, total)
}

// runDuration is how long a run ran: from its start (else its claim) to its
// end, or to now while it is open.
func runDuration(r board.Run, now time.Time) string {
	from := r.ClaimedAt
	if r.StartedAt != nil {
		from = *r.StartedAt
	}
	to := now
	if r.FinishedAt != nil {
		to = *r.FinishedAt
	}
	switch {
	case from.IsZero() || to.Before(from):
		return "–"
	case to.Sub(from) < time.Second:
		return "under 1s"
	}
	return status.Dur(to.Sub(from))
}

// whenText is a time as people read it on the dashboard: UTC, to the
// second ("2026-12-02 15:04:05 UTC").
func whenText(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// askOf is the newest ask report among a card's runs (newest first): the
// agent's question and the options it offered.
func askOf(runs []board.Run) *board.AgentReport {
	for _, r := range runs {
		if r.Report != nil && r.Report.Kind == board.ReportAsk {
			return r.Report
		}
	}
	return nil
}

// markChecks gives each eligibility check the mark the card page draws:
// a parked card is not in an eligible column because it waits for the
// operator's answer, which is not a failure of the card's.
func (e *explainView) markChecks(role board.Role) {
	for i := range e.Checks {
		c := &e.Checks[i]
		switch {
		case c.OK:
			c.Mark, c.Class = "✓", "ok"
		case role == board.RoleParked && c.Name == "in an eligible column":
			c.Mark, c.Class, c.Hint = "◔", "wait", "waiting for you: answer the agent's question above"
		default:
			c.Mark, c.Class = "✗", "bad"
		}
	}
}
