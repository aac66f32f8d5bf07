package board

import "time"

// AgentReport is an agent's own account of how its run ends, given through
// drover's MCP tools or `drover run`: it blocks (What, Where, How), asks a
// human (Question, Options) or says it is done (Summary). A run has at most
// one; routing reads it (policy.ApplyReport) unless drover's own facts
// contradict it.
type AgentReport struct {
	Kind     string    `json:"kind"` // ReportBlock, ReportAsk, ReportDone
	What     string    `json:"what,omitempty"`
	Where    string    `json:"where,omitempty"`
	How      string    `json:"how,omitempty"`
	Question string    `json:"question,omitempty"`
	Options  []string  `json:"options,omitempty"`
	Summary  string    `json:"summary,omitempty"`
	At       time.Time `json:"at"`
}

// Agent report kinds.
const (
	ReportBlock = "block" // drover_block: the card cannot go on as it is
	ReportAsk   = "ask"   // drover_ask_human: a human must answer first
	ReportDone  = "done"  // drover_done: the work is done
)

// Event types of an agent's own calls (drover mcp, drover run); each names
// its run. A comment is a commented event with the agent as its actor. A
// refused call writes nothing.
const (
	EvAgentReport   = "agent_report"   // a block, ask or done report was stored on the run
	EvAgentProgress = "agent_progress" // a progress note; Reason is the note
)
