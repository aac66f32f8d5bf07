package workspace

import "github.com/drover-dev/drover/internal/board"

// Cleanup policies (workspace.cleanup in WORKFLOW.md).
const (
	CleanupNever  = "never"   // keep every workspace
	CleanupOnDone = "on_done" // remove when the card reaches a done column
	CleanupOnSink = "on_sink" // remove when the card reaches done, blocked or cancelled
	// DefaultCleanup is the policy when the config names none.
	DefaultCleanup = CleanupOnDone
)

// Cleanups are the policies, for the config to check workspace.cleanup by.
var Cleanups = []string{CleanupNever, CleanupOnDone, CleanupOnSink}

// ShouldRemove reports whether a card's workspace goes when the card enters a
// column with role. An unknown or empty policy keeps the workspace: losing
// work is worse than keeping a directory.
func ShouldRemove(policy string, role board.Role) bool {
	switch policy {
	case CleanupOnDone:
		return role == board.RoleDone
	case CleanupOnSink:
		return role.IsSink()
	}
	return false
}
