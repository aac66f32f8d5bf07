package claude

import (
	"slices"

	"github.com/drover-dev/drover/internal/agent"
)

// sessionFlags are Claude Code's own session choices (claude --help,
// 2.1.197); a profile that passes one manages its sessions itself, and
// drover does not add --resume. --no-session-persistence keeps no session
// to resume.
var sessionFlags = []string{"--resume", "-r", "--continue", "-c", "--session-id", "--fork-session", "--from-pr", "--no-session-persistence"}

// ResumeArgs are the arguments of a run that continues Claude Code session
// sessionID: the profile's arguments plus --resume <id>; the prompt (stdin
// or argument, as the profile passes it) becomes the session's next user
// message, and the stream-json output of the resumed run carries the same
// session_id (only --fork-session would make a new one). nil when the profile's arguments already choose a session.
func ResumeArgs(p agent.Profile, sessionID string) []string {
	for _, a := range p.Args {
		if slices.Contains(sessionFlags, a) {
			return nil
		}
	}
	return append(slices.Clone(p.Args), "--resume", sessionID)
}
