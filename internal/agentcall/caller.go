package agentcall

import (
	"context"

	"github.com/drover-dev/drover/internal/board"
)

// Caller is what an agent may do about its own run: a Service on the
// store, or a client of drover serve's agent channel (internal/agentchan)
// that reaches a Service through the run's capability.
type Caller interface {
	ReadCard(ctx context.Context) (Card, error)
	Block(ctx context.Context, what, where, how string) (board.AgentReport, error)
	Ask(ctx context.Context, question string, options []string) (board.AgentReport, error)
	Done(ctx context.Context, summary string) (board.AgentReport, error)
	Comment(ctx context.Context, text string) (board.Comment, error)
	Progress(ctx context.Context, note string) (board.Event, error)
}

var _ Caller = (*Service)(nil)
