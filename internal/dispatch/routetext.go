package dispatch

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
)

// question is what a parked run asked: the question the classifier read (a
// tool call, the QUESTION: line), else the agent's structured question, else
// its final text, else the classification's message.
func question(cls policy.Classification, res *agent.Result) string {
	if cls.Question != "" {
		return cls.Question
	}
	if res != nil && !policy.FromAgent(cls.Source) {
		if st := res.Signals.Structured; st.Question != "" {
			return st.Question
		} else if st.ResultText != "" {
			return st.ResultText
		}
	}
	return cls.Message
}

func reasonText(r *board.BlockReason) string {
	return fmt.Sprintf("Blocked (%s)\n\nWhat: %s\nWhere: %s\nHow to continue: %s", r.Kind, r.What, r.Where, r.How)
}

func questionOf(cs []board.Comment) string {
	for _, c := range cs {
		if strings.HasPrefix(c.Body, "Question: ") {
			return strings.TrimPrefix(c.Body, "Question: ")
		}
	}
	return ""
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// column is the board's first column with role.
func column(cfg *config.Config, role board.Role) string {
	c, _ := cfg.Board.First(role)
	return c.Name
}

// blockedColumn is where a block goes: the first blocked column, else
// policy.failed_state.
func blockedColumn(cfg *config.Config) string {
	if c, ok := cfg.Board.First(board.RoleBlocked); ok {
		return c.Name
	}
	return cfg.Policy.FailedState
}

// completedColumn is where a successful run puts its card: the completed
// column (e.g. review) or, when the board has none, done.
func completedColumn(cfg *config.Config) string {
	if c, ok := cfg.Board.First(board.RoleCompleted); ok {
		return c.Name
	}
	return column(cfg, board.RoleDone)
}
