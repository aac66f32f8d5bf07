package policy

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

func TestApplyReport(t *testing.T) {
	block := &board.AgentReport{Kind: board.ReportBlock, What: "the endpoint /v2/pay does not exist", Where: "spec.endpoint", How: "name an endpoint of api.yaml"}
	ask := &board.AgentReport{Kind: board.ReportAsk, Question: "Which database?", Options: []string{"postgres", "sqlite"}}
	done := &board.AgentReport{Kind: board.ReportDone, Summary: "added the flag and its test"}
	failed := Classification{Kind: KindAgentFailed, Source: "exit_code", Message: "exit status 1"}
	clean := Classification{Kind: KindSucceeded, Source: "exit_code"}
	timeout := Classification{Kind: KindTimeout, Source: "killed:timeout", Message: "drover stopped the run: it exceeded its total time limit"}
	cancel := Classification{Kind: KindCancelled, Source: "killed:cancel", Message: "an operator cancelled it"}
	spend := Classification{Kind: KindSpendLimit, Source: "killed:spend", Message: "a spend cap was reached"}
	cases := []struct {
		name   string
		in     Classification
		r      *board.AgentReport
		kind   Kind
		source string
		msg    string
	}{
		{"no report: the signals decide", failed, nil, KindAgentFailed, "exit_code", "exit status 1"},
		{"block after a clean exit", clean, block, KindAgentBlocked, "agent:drover_block", block.What},
		{"block after exit 1", failed, block, KindAgentBlocked, "agent:drover_block", block.What},
		{"ask parks with the options", clean, ask, KindInputRequired, "agent:drover_ask_human", "Which database? (options: postgres | sqlite)"},
		{"done beats a failed exit", failed, done, KindSucceeded, "agent:drover_done", done.Summary},
		{"timeout: drover's reason wins", timeout, block, KindTimeout, "killed:timeout", timeout.Message + "; the agent had reported (drover_block): " + block.What},
		{"cancel: drover's reason wins", cancel, done, KindCancelled, "killed:cancel", cancel.Message + "; the agent had reported (drover_done): " + done.Summary},
		{"spend cap: drover's reason wins", spend, ask, KindSpendLimit, "killed:spend", spend.Message + "; the agent had reported (drover_ask_human): Which database? (options: postgres | sqlite)"},
		{"unknown report kind is ignored", failed, &board.AgentReport{Kind: "later"}, KindAgentFailed, "exit_code", "exit status 1"},
	}
	for _, c := range cases {
		got := ApplyReport(c.in, c.r)
		if got.Kind != c.kind || got.Source != c.source || got.Message != c.msg {
			t.Errorf("%s: ApplyReport = %+v, want kind %s source %s message %q", c.name, got, c.kind, c.source, c.msg)
		}
		if FromAgent(got.Source) != strings.HasPrefix(c.source, "agent:") {
			t.Errorf("%s: FromAgent(%q) wrong", c.name, got.Source)
		}
	}
}

// TestDecideAgentBlocked: the agent's block blocks at once, is never
// counted, and the block reason is the agent's own what, where and how.
func TestDecideAgentBlocked(t *testing.T) {
	rep := &board.AgentReport{Kind: board.ReportBlock, What: "the endpoint /v2/pay does not exist", Where: "spec.endpoint", How: "name an endpoint of api.yaml"}
	for _, prior := range [][]board.Run{nil, {{ID: "r1", Attempt: 1, Kind: string(KindAgentFailed), Counted: true, Outcome: board.OutcomeFailed}}} {
		h := append(append([]board.Run{}, prior...), board.Run{ID: "r9", Attempt: len(prior) + 1})
		in := input(Defaults(), KindAgentBlocked, h)
		in.Classification = ApplyReport(Classification{Kind: KindSucceeded}, rep)
		in.Report = rep
		d := Decide(in)
		if d.Verb != VerbBlock || d.Counted || d.Outcome != board.OutcomeBlocked || d.NextState != "blocked" || d.NextAttemptAt != nil {
			t.Fatalf("Decide = %+v, want an uncounted block with no retry", d)
		}
		br := d.BlockReason
		if br == nil || br.Kind != string(KindAgentBlocked) || br.What != rep.What || br.Where != rep.Where || br.How != rep.How {
			t.Fatalf("block reason = %+v, want the agent's own words", br)
		}
		if len(d.Notify) != 1 || d.Notify[0] != NotifyBlocked {
			t.Fatalf("notify = %v", d.Notify)
		}
	}
	// A blank where or how is filled by drover's own.
	in := input(Defaults(), KindAgentBlocked, []board.Run{{ID: "r9", Attempt: 1}})
	in.Report = &board.AgentReport{Kind: board.ReportBlock, What: "no access to the repo"}
	d := Decide(in)
	if d.BlockReason.What != "no access to the repo" || !strings.Contains(d.BlockReason.Where, "run r9") || !strings.Contains(d.BlockReason.How, "drover card resume DRV-7") {
		t.Fatalf("block reason = %+v", d.BlockReason)
	}
}
