package opencode

import (
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
)

// sessionFlags are `opencode run`'s own session choices (opencode run
// --help, 1.18.33); a profile that passes one manages its sessions itself,
// and drover does not add --session. --fork makes a new session from the
// one continued.
var sessionFlags = []string{"--session", "-s", "--continue", "-c", "--fork", "--attach"}

// ResumeArgs are the arguments of a run that continues opencode session
// sessionID (the sessionID every JSON event carries): the profile's
// arguments plus --session <id>. The prompt on stdin becomes the session's
// next user message, and the resumed run's events carry the same
// sessionID. The session lives in opencode's data folder
// ($XDG_DATA_HOME/opencode, else ~/.local/share/opencode), so a resumed run
// needs the same HOME. nil when the profile's arguments already choose a
// session, or give the prompt as an argument rather than on stdin.
func ResumeArgs(p agent.Profile, sessionID string) []string {
	if p.Prompt != "" && p.Prompt != "stdin" {
		return nil
	}
	for _, a := range p.Args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(sessionFlags, name) {
			return nil
		}
	}
	return append(slices.Clone(p.Args), "--session", sessionID)
}
