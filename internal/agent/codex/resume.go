package codex

import (
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/codex/appserver"
)

// Options `codex exec resume` accepts (codex-cli 0.171.0, `codex exec resume
// --help`), with whether each takes a value. resume takes fewer options
// than exec (no --sandbox, --full-auto, --cd, --color …), so a profile
// passing one of those cannot be resumed as given.
var resumeOptions = map[string]bool{
	"-c": true, "--config": true, "--enable": true, "--disable": true, "-i": true, "--image": true,
	"--remote": true, "--remote-auth-token-env": true, "-m": true, "--model": true, "--thread-source": true,
	"--cyber-access-program": true, "--output-schema": true, "-o": true, "--output-last-message": true,
	"--all": false, "--strict-config": false, "--dangerously-bypass-approvals-and-sandbox": false,
	"--dangerously-bypass-hook-trust": false, "--worktree": false, "--skip-git-repo-check": false,
	"--trust": false, "--ignore-user-config": false, "--ignore-rules": false, "--json": false,
}

// ResumeArgs are the arguments of a run that continues Codex session
// sessionID (the thread_id of its thread.started event): `exec resume
// [the profile's exec options] <id> -`, the prompt on stdin as the next
// user message. nil, so the run starts a new session, when the profile
// does not run `exec` with the prompt on stdin, passes an option resume
// does not take, or runs --ephemeral (such a session is not kept to
// resume).
//
// In app-server mode the arguments stay as they are: the app-server
// resumes the thread over the protocol (thread/resume with the id the
// agent gets in Invocation.ResumeSession).
func ResumeArgs(p agent.Profile, sessionID string) []string {
	if appserver.Mode(p.Args) {
		return slices.Clone(p.Args)
	}
	if len(p.Args) == 0 || p.Args[0] != "exec" || (p.Prompt != "" && p.Prompt != "stdin") {
		return nil
	}
	out := []string{"exec", "resume"}
	rest := p.Args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "-" {
			continue
		}
		name, _, inline := strings.Cut(a, "=")
		takesValue, ok := resumeOptions[name]
		if !ok {
			return nil
		}
		out = append(out, a)
		if takesValue && !inline {
			if i+1 >= len(rest) {
				return nil
			}
			i++
			out = append(out, rest[i])
		}
	}
	return append(slices.Clip(out), sessionID, "-")
}
