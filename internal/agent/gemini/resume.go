package gemini

import (
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
)

// sessionFlags are Gemini CLI's own session choices (gemini --help,
// 0.61.0); a profile that passes one manages its sessions itself, and
// drover does not add --resume.
var sessionFlags = []string{"--resume", "-r", "--session-id", "--session-file", "--list-sessions", "--delete-session"}

// ResumeArgs are the arguments of a run that continues Gemini CLI session
// sessionID: the profile's arguments plus --resume <id>. 0.61.0 takes the
// session's UUID (the init event's session_id) as well as "latest" or an
// index; it looks the session up among those of the current project (the
// workspace: drover runs a card's attempts in the same folder) under the
// CLI's home (~/.gemini/tmp/<project>/chats). The prompt on stdin becomes
// the session's next user message, and the resumed run's init event
// carries the same session_id. nil when the profile's arguments already
// choose a session.
func ResumeArgs(p agent.Profile, sessionID string) []string {
	for _, a := range p.Args {
		flag, _, _ := strings.Cut(a, "=")
		if slices.Contains(sessionFlags, flag) {
			return nil
		}
	}
	return append(slices.Clone(p.Args), "--resume", sessionID)
}
