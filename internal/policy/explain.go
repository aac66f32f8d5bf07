package policy

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/drover-dev/drover/internal/board"
)

// BudgetLine is one budget of a card in its current retry epoch. Limit and
// Left are -1 when the budget is unbounded.
type BudgetLine struct {
	Name  string `json:"name"` // the config key, e.g. policy.max_attempts
	Used  int    `json:"used"`
	Limit int    `json:"limit"`
	Left  int    `json:"left"`
}

func line(name string, used, limit int) BudgetLine {
	if limit < 0 {
		return BudgetLine{Name: name, Used: used, Limit: -1, Left: -1}
	}
	return BudgetLine{Name: name, Used: used, Limit: limit, Left: max(limit-used, 0)}
}

// Budgets lists a card's budgets from the routed runs of its current retry
// epoch: max_attempts (counted runs), each per-kind cap (runs of that kind; the
// cap is the retries allowed, so the run after the last one left gives up),
// the release streak and the clean-exit streak.
func Budgets(cfg Config, history []board.Run) []BudgetLine {
	limit := cfg.maxAttempts()
	if limit == 0 {
		limit = -1
	}
	out := []BudgetLine{line("policy.max_attempts", CountedAttempts(history), limit)}
	for _, k := range Kinds {
		if c := cfg.Cap(k); c != NoCap {
			out = append(out, line("policy.kinds."+string(k)+".cap", countKind(history, k), c))
		}
	}
	out = append(out,
		line("policy.release_churn_cap", trailing(history, board.OutcomeReleased), max(cfg.ReleaseChurnCap, 1)),
		line("policy.continuation_cap", trailing(history, board.OutcomeSucceeded, board.OutcomeReleased), max(cfg.ContinuationCap, 1)))
	return out
}

// RenderBudgets prints budget lines as a small table.
func RenderBudgets(lines []BudgetLine) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "BUDGET\tUSED\tLIMIT\tLEFT")
	for _, l := range lines {
		lim, left := fmt.Sprint(l.Limit), fmt.Sprint(l.Left)
		if l.Limit < 0 {
			lim, left = "unbounded", "unbounded"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", l.Name, l.Used, lim, left)
	}
	w.Flush()
	return b.String()
}

// PolicyRow is one kind in `drover policy show`.
type PolicyRow struct {
	Kind          Kind     `json:"kind"`
	Verb          string   `json:"verb"` // KindSpec.Label
	Counts        bool     `json:"counts"`
	Cap           int      `json:"cap"`      // per-card retries of this kind; -1 none
	Schedule      []string `json:"schedule"` // the delays before each retry; "…" when it goes on
	WhatCanChange string   `json:"what_can_change"`
}

// scheduleShown is how many delays policy show prints for an open-ended schedule.
const scheduleShown = 10

// ShowPolicy is the effective policy per kind with concrete schedules: a
// counted kind shows the max_attempts-1 delays before its give-up, a capped
// kind its cap's delays, an open-ended one the first few and "…".
func ShowPolicy(cfg Config) []PolicyRow {
	var rows []PolicyRow
	for _, k := range Kinds {
		s := Spec(k)
		r := PolicyRow{Kind: k, Verb: s.Label(), Counts: s.Counts, Cap: cfg.Cap(k), WhatCanChange: s.WhatCanChange, Schedule: []string{}}
		if s.Reschedules {
			n, more := r.Cap, false
			if s.Counts {
				n = cfg.maxAttempts() - 1
				if cfg.maxAttempts() == 0 {
					n = -1
				}
			}
			if n < 0 || n > scheduleShown {
				n, more = scheduleShown, true
			}
			for _, d := range Schedule(cfg, k, n) {
				r.Schedule = append(r.Schedule, FormatDuration(d))
			}
			if more {
				r.Schedule = append(r.Schedule, "…")
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// RenderPolicy prints `drover policy show`: the budgets, then one row per kind.
func RenderPolicy(cfg Config) string {
	var b strings.Builder
	maxA := fmt.Sprint(cfg.MaxAttempts)
	if cfg.MaxAttempts < 0 {
		maxA = "unbounded"
	}
	fmt.Fprintf(&b, "max_attempts: %s   failed_state: %s   backoff: %s×2^(n-1), max %s, jitter %g\n",
		maxA, cfg.FailedState, FormatDuration(cfg.Backoff.Base), FormatDuration(cfg.Backoff.Max), cfg.Backoff.Jitter)
	fmt.Fprintf(&b, "release_churn_cap: %d   continuation_cap: %d   breaker: %d hits in %s, cooldown %s\n\n",
		cfg.ReleaseChurnCap, cfg.ContinuationCap, cfg.BreakerThreshold, FormatDuration(cfg.BreakerWindow), FormatDuration(cfg.BreakerCooldown))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tVERB\tCOUNTS\tCAP\tSCHEDULE\tWHAT CAN CHANGE")
	for _, r := range ShowPolicy(cfg) {
		counts, cp, sched := "no", "-", "-"
		if r.Counts {
			counts, cp = "yes", "max_attempts"
		}
		if r.Cap != NoCap {
			cp = fmt.Sprint(r.Cap)
		}
		if len(r.Schedule) > 0 {
			sched = strings.Join(r.Schedule, " ")
			if r.Schedule[len(r.Schedule)-1] != "…" {
				sched += ", then give up"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.Verb, counts, cp, sched, r.WhatCanChange)
	}
	w.Flush()
	return b.String()
}
