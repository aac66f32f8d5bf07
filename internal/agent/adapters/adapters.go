// Package adapters joins the agent output parsers (agent/claude,
// agent/codex) to policy.Classify. It is what `drover classify` and the
// dispatcher call to turn a finished process into a Classification. It
// sits apart from package agent so that agent runners living in
// agent/claude or agent/codex may import agent without a cycle.
package adapters

import (
	"bytes"
	"time"

	"github.com/drover-dev/drover/internal/agent/claude"
	"github.com/drover-dev/drover/internal/agent/codex"
	"github.com/drover-dev/drover/internal/policy"
)

// OutputParser is what every structured-output parser offers.
type OutputParser interface {
	// Feed reads one stdout line; it never panics.
	Feed(line []byte)
	// Structured returns the typed fields read so far.
	Structured() policy.Structured
	// Progress is the live view of a running agent.
	Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64)
}

// StderrFeeder is implemented by parsers that also read stderr (codex in
// plain-text mode prints its errors there).
type StderrFeeder interface {
	FeedStderr(line []byte)
}

// NewParser returns the output parser for an agent kind (claude, codex), or
// nil for kinds without structured output (command, sim, unknown kinds).
func NewParser(agentKind string) OutputParser {
	switch agentKind {
	case "claude":
		return claude.NewParser()
	case "codex":
		return codex.NewParser()
	}
	return nil
}

// DefaultArgs returns the arguments drover passes to the agent binary for
// an agent kind, or nil when the profile's own args are all there is.
func DefaultArgs(agentKind string) []string {
	switch agentKind {
	case "claude":
		return claude.DefaultArgs()
	case "codex":
		return codex.DefaultArgs()
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
	if f, ok := p.(StderrFeeder); ok {
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
