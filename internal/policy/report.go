package policy

import (
	"strings"

	"github.com/drover-dev/drover/internal/board"
)

// VerifySource is the Source of a verify_failed verdict (drover's own
// checks), and starts that of a run recovered before its checks could run
// (UnverifiedSource): an agent's drover_done overrules neither.
const (
	VerifySource     = "verify"
	UnverifiedSource = "verify: not run"
)

// GitSource starts the Source of a verdict drover found in the card's git
// branch after the agent (no_changes, push_rejected, a failed push): an
// agent's drover_done overrules none of them.
const GitSource = "git"

// ReportSource prefixes the Source of a verdict that came from the agent's
// own report ("agent:drover_block"); views mark such reasons as the agent's.
const ReportSource = "agent:"

// Report tools: the MCP tool (and `drover run` verb) behind each report kind.
var reportTools = map[string]string{
	board.ReportBlock: "drover_block",
	board.ReportAsk:   "drover_ask_human",
	board.ReportDone:  "drover_done",
}

// ApplyReport is the verdict on a run once the agent's own report r (nil:
// none) is heard. The report decides, unless drover's own facts contradict
// it: when drover stopped the run itself (timeout, stall, cancel, spend cap,
// shutdown: a killed: source), or its verify step failed after the agent
// said it was done, drover's reason wins and the report only adds a note
// to the message (the report itself stays on the run). Otherwise a
// block is agent_blocked with the agent's what, an ask is input_required
// with its question (and options), and done is succeeded with its summary,
// whatever the exit code said.
func ApplyReport(c Classification, r *board.AgentReport) Classification {
	if r == nil {
		return c
	}
	tool := reportTools[r.Kind]
	if tool == "" {
		return c // a kind this drover does not know: the run's own signals decide
	}
	if strings.HasPrefix(c.Source, "killed:") || ((strings.HasPrefix(c.Source, VerifySource) || strings.HasPrefix(c.Source, GitSource)) && r.Kind == board.ReportDone) {
		c.Message += "; the agent had reported (" + tool + "): " + ReportText(r)
		return c
	}
	out := Classification{Source: ReportSource + tool, Message: ReportText(r)}
	switch r.Kind {
	case board.ReportBlock:
		out.Kind = KindAgentBlocked
	case board.ReportAsk:
		out.Kind = KindInputRequired
	default:
		out.Kind = KindSucceeded
	}
	return out
}

// ReportText is a report in one line: the block's what, the question with
// its options, or the summary.
func ReportText(r *board.AgentReport) string {
	switch r.Kind {
	case board.ReportBlock:
		return r.What
	case board.ReportAsk:
		if len(r.Options) > 0 {
			return r.Question + " (options: " + strings.Join(r.Options, " | ") + ")"
		}
		return r.Question
	}
	return r.Summary
}

// FromAgent reports whether a verdict's source is the agent's own report.
func FromAgent(source string) bool { return strings.HasPrefix(source, ReportSource) }
