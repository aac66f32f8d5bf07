// Package registry is the one list of agent kinds. Each kind lives in its own
// package (agent/command, agent/claude, agent/codex, agent/gemini,
// agent/opencode, agent/sim) and describes itself with an
// agent.Registration; the list below is the only place that names them all.
// The config (which kinds a profile may name, which need a command), the
// dispatcher (building an agent, checking a card's spec, looking for a
// program on PATH) and `drover classify` (which parser reads the output) ask
// this package, so adding a kind is one new package and one line here.
//
// It sits apart from package agent because every kind package imports agent
// for the Agent interface; the registry imports them all.
package registry

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/claude"
	"github.com/drover-dev/drover/internal/agent/codex"
	"github.com/drover-dev/drover/internal/agent/command"
	"github.com/drover-dev/drover/internal/agent/gemini"
	"github.com/drover-dev/drover/internal/agent/opencode"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/agent/sim"
)

// kinds is every agent kind, in the order errors and documentation list them.
var kinds = []agent.Registration{
	command.Registration(),
	claude.Registration(),
	codex.Registration(),
	gemini.Registration(),
	opencode.Registration(),
	sim.Registration(),
}

// DemoKind is the kind of the built-in simulated agent: the profile a
// WORKFLOW.md without agents gets, and what `drover demo` and `drover bench`
// run.
const DemoKind = sim.Kind

// SymphonyCodexKind is the kind Symphony's codex: section becomes (a profile
// named after it).
const SymphonyCodexKind = codex.Kind

// Names returns the kind names, in the registry's order.
func Names() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Kind
	}
	return out
}

// Lookup returns the registration of a kind. An empty kind is the command
// kind (a profile built in code without one runs its program plainly).
func Lookup(kind string) (agent.Registration, bool) {
	if kind == "" {
		kind = command.Kind
	}
	for _, k := range kinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return agent.Registration{}, false
}

// New builds the agent for a profile: the kind's default command and
// arguments fill in what the profile leaves out, then the kind's constructor
// runs.
func New(p agent.Profile) (agent.Agent, error) {
	reg, ok := Lookup(p.Kind)
	if !ok {
		return nil, fmt.Errorf("agents.profiles.%s.kind: %q is not %s", p.Name, p.Kind, orList(Names()))
	}
	return reg.New(WithDefaults(p))
}

// WithDefaults returns p ready to run: its kind's default command where it
// names none; the kind's DefaultArgs, then the profile's args, then the
// kind's LastArgs (unless the profile replaces them, args_mode: replace);
// and EnvPassthrough with CommonPassEnv and the kind's PassEnv merged in.
// The result's ArgsMode is ArgsReplace, as its Args are now the whole list,
// so applying WithDefaults twice changes nothing.
func WithDefaults(p agent.Profile) agent.Profile {
	reg, ok := Lookup(p.Kind)
	if !ok {
		return p
	}
	if p.Command == "" {
		p.Command = reg.DefaultCommand
	}
	if p.ArgsMode != agent.ArgsReplace {
		var args []string
		if reg.DefaultArgs != nil {
			args = append(args, reg.DefaultArgs(p)...)
		}
		args = append(args, p.Args...)
		if reg.LastArgs != nil {
			args = append(args, reg.LastArgs(p)...)
		}
		p.Args, p.ArgsMode = args, agent.ArgsReplace
	}
	if !reg.InProcess {
		p.EnvPassthrough = union(agent.CommonPassEnv, reg.PassEnv, p.EnvPassthrough)
	}
	return p
}

// Resume returns p set up to continue the agent's session sessionID: its
// kind's ResumeArgs in place of its arguments. ok is false, and p is
// returned as given, when there is no session, the profile says resume:
// never, the kind cannot resume with these arguments, or the id is not a
// plain session token (see sessionIDRe); the run then starts a new session.
func Resume(p agent.Profile, sessionID string) (agent.Profile, bool) {
	reg, known := Lookup(p.Kind)
	if !known || reg.ResumeArgs == nil || !sessionIDRe.MatchString(sessionID) || p.Resume == agent.ResumeNever {
		return p, false
	}
	filled := WithDefaults(p)
	args := reg.ResumeArgs(filled, sessionID)
	if args == nil {
		return p, false
	}
	filled.Args = args
	return filled, true
}

// sessionIDRe is what a session id drover resumes looks like. The id is
// read from the agent's own output and goes into the next run's argv, so
// it must be one plain token that no CLI can take for an option (no
// leading '-'), a path (no '/') or more than one argument. The ids the
// supported CLIs print fit it: Claude, Codex and Gemini print UUIDs,
// opencode "ses_" and base62 (testdata of each kind).
var sessionIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// PassEnv returns the variables an agent of the profile inherits from
// drover's environment when they are set, sorted: proc's base variables and
// the names WithDefaults merges (none for kinds that run in process).
func PassEnv(p agent.Profile) []string {
	if InProcess(p.Kind) {
		return nil
	}
	names := union(proc.BaseEnvKeys, WithDefaults(p).EnvPassthrough)
	sort.Strings(names)
	return names
}

// CheckArgs checks a replacement argument list (args_mode: replace) keeps
// what the kind's parser needs; nil for kinds that need nothing.
func CheckArgs(kind string, args []string) error {
	if reg, ok := Lookup(kind); ok && reg.CheckArgs != nil {
		return reg.CheckArgs(args)
	}
	return nil
}

// CheckProfile checks the profile keys that only one kind reads (codex
// app-server's approval and sandbox settings) on a profile of any kind;
// given says which keys the file sets.
func CheckProfile(p *agent.Profile, given func(key string) bool) []agent.KeyProblem {
	return append(codex.CheckAppServer(p, given), codex.CheckModel(p, given)...)
}

// SymphonyCommand makes Symphony's codex.command line the command and
// arguments of the profile its codex: section becomes.
func SymphonyCommand(p *agent.Profile, line string) error { return codex.SetCommandLine(p, line) }

// union is the names of lists in order, each once.
func union(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// ValidateSpec checks a card's spec against what the kind reads from it; nil
// for kinds that read nothing (and for unknown kinds, which fail elsewhere).
func ValidateSpec(kind string, spec []byte) error {
	if reg, ok := Lookup(kind); ok && reg.ValidateSpec != nil {
		return reg.ValidateSpec(spec)
	}
	return nil
}

// InProcess reports whether a kind runs inside drover, with no program to
// find on PATH.
func InProcess(kind string) bool {
	reg, ok := Lookup(kind)
	return ok && reg.InProcess
}

// orList joins names as "a, b, c or d".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
