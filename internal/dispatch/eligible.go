package dispatch

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Check is one eligibility condition with its verdict and, when it fails, what
// would make it pass. drover explain prints these.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Hint string `json:"hint,omitempty"`
}

// Facts is everything the eligibility rule looks at, gathered by the
// dispatcher (or by explain) so the rule itself stays pure.
type Facts struct {
	Board    board.Board
	Card     board.Card
	Now      time.Time
	Blockers []board.Card // the cards in Card.BlockedBy that exist
	// Cycle, when the card waits on itself through its blockers (data
	// written before the store refused cycles), is the loop of identifiers
	// from the card back to it.
	Cycle      []string
	Profile    string // resolved profile name
	ProfileOK  bool   // the profile is configured
	Unusable   string // why this node cannot run the profile ("" = it can)
	Full       string // why the profile has no room (its max_concurrent across the nodes; "" = it has)
	BreakerOK  bool
	BreakerWhy string
	SpendWhy   string // dispatch paused by the day's spend cap ("" = not)
	SlotsFree  int    // free global slots on this node
	StateFree  int    // free slots for the card's column (max_concurrent_agents_by_state); <0 = no limit
}

// Eligible runs every check in order; the card may be claimed only when all pass.
func Eligible(f Facts) []Check {
	c := f.Card
	id := c.Identifier
	role := f.Board.RoleOf(c.State)
	checks := []Check{}
	add := func(name string, ok bool, hint string) {
		if ok {
			hint = ""
		}
		checks = append(checks, Check{name, ok, hint})
	}
	add("in an eligible column", role == board.RoleEligible, notEligibleHint(f.Board, c, role))
	add("not claimed", c.Claim == nil || !c.Claim.LeaseUntil.After(f.Now),
		claimHint(c))
	due := c.NextAttemptAt == nil || !c.NextAttemptAt.After(f.Now)
	dueHint := ""
	if c.NextAttemptAt != nil {
		dueHint = fmt.Sprintf("next attempt at %s (in %s): %s", c.NextAttemptAt.UTC().Format(time.RFC3339), c.NextAttemptAt.Sub(f.Now).Round(time.Second), c.StateReason)
	}
	add("retry time reached", due, dueHint)
	var waiting []string
	for _, b := range f.Blockers {
		if f.Board.RoleOf(b.State) != board.RoleDone {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", b.Identifier, b.State))
		}
	}
	hint := "waits on " + strings.Join(waiting, ", ")
	if len(f.Cycle) > 0 {
		hint += fmt.Sprintf("; these cards wait on each other in a cycle (%s) and none will ever run: break it with drover card edit %s --blocked-by ID (the cards it should still wait on, or \"\" for none)",
			strings.Join(f.Cycle, " → "), id)
	}
	add("blockers done", len(waiting) == 0, hint)
	add("agent profile known", f.ProfileOK, fmt.Sprintf("profile %q is not in agents.profiles; drover card edit %s --agent NAME", f.Profile, id))
	add("agent usable on this node", f.Unusable == "", f.Unusable)
	add("agent profile not paused", f.BreakerOK, f.BreakerWhy)
	add("agent profile under its max_concurrent", f.Full == "", f.Full)
	add("spend under the day cap", f.SpendWhy == "", f.SpendWhy)
	add("a slot is free", f.SlotsFree > 0, "every slot (agent.max_concurrent_agents) is busy; it runs when one frees")
	if f.StateFree >= 0 {
		add("a slot for its column is free", f.StateFree > 0, fmt.Sprintf("agent.max_concurrent_agents_by_state.%s is reached", c.State))
	}
	return checks
}

// AllOK reports whether every check passed.
func AllOK(cs []Check) bool {
	for _, c := range cs {
		if !c.OK {
			return false
		}
	}
	return true
}

// notEligibleHint is the command that makes the card eligible from where it is.
func notEligibleHint(b board.Board, c board.Card, role board.Role) string {
	id := c.Identifier
	switch role {
	case board.RoleBlocked, board.RoleCancelled:
		return fmt.Sprintf("%s is in %s (role %s); drover card resume %s makes it eligible with a fresh budget", id, c.State, role, id)
	case board.RoleDone, board.RoleCompleted:
		return fmt.Sprintf("%s is in %s (role %s); drover card reopen %s makes it eligible with a fresh budget", id, c.State, role, id)
	case board.RoleParked:
		return fmt.Sprintf("%s waits for an answer in %s; drover card answer %s TEXT makes it eligible", id, c.State, id)
	case board.RoleRunning:
		return fmt.Sprintf("%s is in %s (role running): a run is live or being recovered", id, c.State)
	}
	return fmt.Sprintf("%s is in %s (role %s); drover card mv %s %s makes it eligible", id, c.State, role, id, firstEligible(b))
}

func claimHint(c board.Card) string {
	if c.Claim == nil {
		return ""
	}
	return fmt.Sprintf("claimed by %s until %s (a run is live)", c.Claim.Owner, c.Claim.LeaseUntil.UTC().Format(time.RFC3339))
}

func firstEligible(b board.Board) string {
	if c, ok := b.First(board.RoleEligible); ok {
		return c.Name
	}
	return "ready"
}
