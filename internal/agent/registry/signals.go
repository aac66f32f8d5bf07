package registry

import (
	"bytes"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/policy"
)

// NewParser returns a fresh output parser for an agent kind, or nil for
// kinds whose output is plain text (and unknown kinds).
func NewParser(kind string) agent.Parser {
	if reg, ok := Lookup(kind); ok && reg.NewParser != nil {
		return reg.NewParser()
	}
	return nil
}

// TailBytes is how much of stdout and stderr goes into Signals.
const TailBytes = 64 << 10

// BuildSignals parses a finished process's whole output the way the
// dispatcher does as the output streams, and returns the Signals Classify
// reads. KilledFor and Signaled stay unset: only the dispatcher knows those.
func BuildSignals(agentKind string, exitCode int, stdout, stderr []byte, now time.Time) policy.Signals {
	s := policy.Signals{
		AgentKind: agentKind,
		ExitCode:  exitCode,
		Stdout:    tail(stdout),
		Stderr:    tail(stderr),
		Now:       now,
	}
	p := NewParser(agentKind)
	if p == nil {
		return s
	}
	eachLine(stdout, p.Feed)
	if f, ok := p.(agent.StderrFeeder); ok {
		eachLine(stderr, f.FeedStderr)
	}
	s.Structured = p.Structured()
	return s
}

// ClassifyOutput classifies a finished agent's output: the agent kind's
// parser (if any), then policy.Classify with the profile's rules. This is
// what `drover classify --agent KIND [--exit-code N] [--stderr FILE] < stdout`
// calls. For kind command (or any kind without a parser) only rules, the
// phrase table and the exit code apply.
func ClassifyOutput(agentKind string, exitCode int, stdout, stderr []byte, now time.Time, rules []policy.Rule) policy.Classification {
	return policy.Classify(BuildSignals(agentKind, exitCode, stdout, stderr, now), rules)
}

func eachLine(b []byte, feed func([]byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			feed(b)
			return
		}
		feed(b[:i])
		b = b[i+1:]
	}
}

func tail(b []byte) string {
	if len(b) > TailBytes {
		b = b[len(b)-TailBytes:]
	}
	return string(b)
}
