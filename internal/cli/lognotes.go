package cli

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// agentNotes reads, for drover logs, what a run's agent said through
// drover mcp or drover run: its comments, progress notes and report, each
// once, as lines "[drover_progress] note".
type agentNotes struct {
	st    store.Store
	run   board.Run
	since int64
}

func (n *agentNotes) next(ctx context.Context) []string {
	evs, err := n.st.ListEvents(ctx, store.EventFilter{CardID: n.run.CardID, SinceSeq: n.since})
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range evs {
		n.since = e.Seq
		if e.RunID != n.run.ID || !strings.HasPrefix(e.Actor, "agent:") {
			continue
		}
		switch e.Type {
		case board.EvAgentProgress:
			out = append(out, "[drover_progress] "+e.Reason+"\n")
		case board.EvCommented:
			out = append(out, "[drover_comment] "+e.Reason+"\n")
		case board.EvAgentReport:
			var d struct {
				Report board.AgentReport `json:"report"`
			}
			_ = json.Unmarshal(e.Data, &d)
			out = append(out, "[report "+d.Report.Kind+"] "+e.Reason+"\n")
		}
	}
	return out
}
