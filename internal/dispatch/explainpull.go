package dispatch

import (
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

// pullExplain is what a card with a pull request waits for ("" without
// one): "PR #12: waiting for review", "PR #12: check `test` failed,
// attempt 3 of 10 next", "PR #12 merged by alice: done", "PR #12 closed
// without merging by bob".
func pullExplain(c board.Card, role board.Role, runs []board.Run, pc policy.Config) string {
	pr := c.PullRequest
	if pr == nil || pr.Number == 0 {
		return ""
	}
	n := fmt.Sprintf("PR #%d", pr.Number)
	switch pr.State {
	case board.PullMerged:
		if strings.HasPrefix(c.StateReason, n+" merged by ") {
			return c.StateReason
		}
		return n + " merged: done"
	case board.PullClosed:
		if r := c.BlockReason; r != nil && strings.HasPrefix(r.What, n+" was closed") {
			return n + strings.TrimPrefix(r.What, n+" was")
		}
		return n + " closed without merging"
	}
	if role == board.RoleCompleted {
		return n + ": waiting for review"
	}
	if role != board.RoleEligible && role != board.RoleRunning {
		return ""
	}
	next := policy.CountedAttempts(runs) + 1
	of := ""
	if pc.MaxAttempts > 0 {
		of = fmt.Sprintf(" of %d", pc.MaxAttempts)
	}
	if len(runs) > 0 {
		if last := runs[len(runs)-1]; last.Kind == string(policy.KindCheckFailed) {
			name := strings.TrimPrefix(last.Error, "check ")
			if i := strings.Index(name, " failed on "); i >= 0 {
				name = name[:i]
			}
			return fmt.Sprintf("%s: check `%s` failed, attempt %d%s next", n, name, next, of)
		}
	}
	return fmt.Sprintf("%s: changes requested, attempt %d%s next", n, next, of)
}
