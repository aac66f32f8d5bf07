package board

import "fmt"

// Mover says who asks for a move: automation or a person.
type Mover int

// Movers.
const (
	ByDispatcher Mover = iota
	ByOperator
)

// MoveError is a move the rules refuse. It names the fix.
type MoveError struct{ Msg string }

func (e *MoveError) Error() string { return e.Msg }

// CheckMove is the pure rule for a plain move from one column to another.
// Sinks (blocked, done, cancelled) are never left by the dispatcher; an operator
// leaves them only with resume or reopen, which open a new retry epoch.
func CheckMove(b Board, ident, from, to string, by Mover) error {
	fc, ok := b.Column(from)
	if !ok {
		return &MoveError{fmt.Sprintf("%s is in %q, which is not on the board; move it with drover card mv %s <state> after fixing board.columns", ident, from, ident)}
	}
	tc, ok := b.Column(to)
	if !ok {
		return &InputError{Field: "state", Msg: b.StateError("state", to).Error()[len("state: "):]}
	}
	if from == to {
		return nil
	}
	if fc.Role.IsSink() {
		if by == ByDispatcher {
			return &MoveError{fmt.Sprintf("%s is in %s (a sink): automation never moves it out; an operator runs drover card resume %s", ident, from, ident)}
		}
		verb := "resume"
		if fc.Role == RoleDone {
			verb = "reopen"
		}
		return &MoveError{fmt.Sprintf("%s is in %s (a sink): a plain move would keep its spent budget; run drover card %s %s to open a new retry epoch", ident, from, verb, ident)}
	}
	if by == ByOperator && tc.Role == RoleRunning {
		return &MoveError{fmt.Sprintf("%s: only the dispatcher moves cards into %s (by claiming them); move it to an eligible column instead", ident, to)}
	}
	return nil
}

// CheckResume is the rule for drover card resume: out of blocked or cancelled
// (or a parked card an operator wants to restart) into the eligible column.
func CheckResume(b Board, ident, from string) error {
	switch b.RoleOf(from) {
	case RoleBlocked, RoleCancelled, RoleParked:
		return nil
	case RoleDone:
		return &MoveError{fmt.Sprintf("%s is done; use drover card reopen %s to run it again", ident, ident)}
	}
	return &MoveError{fmt.Sprintf("%s is in %s, not blocked, cancelled or parked; nothing to resume (drover explain %s says what happens next)", ident, from, ident)}
}

// CheckReopen is the rule for drover card reopen: out of done, completed or
// cancelled back into the eligible column with a new retry epoch.
func CheckReopen(b Board, ident, from string) error {
	switch b.RoleOf(from) {
	case RoleDone, RoleCompleted, RoleCancelled, RoleBlocked:
		return nil
	}
	return &MoveError{fmt.Sprintf("%s is in %s; reopen applies to done, completed, cancelled or blocked cards", ident, from)}
}
