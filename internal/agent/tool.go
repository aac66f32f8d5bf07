package agent

import (
	"context"
	"encoding/json"
)

// Tool is one more function the dispatcher offers an agent beside drover's
// own (drover_card, drover_block, ...): today the Linear board's
// linear_graphql. Kinds that offer tools to the model (codex app-server's
// dynamic tools) send Name, Description and InputSchema (a JSON Schema
// object) and answer a call with Call; the others ignore Tools. Call gets
// the call's arguments as the model sent them and returns the result text;
// an error is a failed tool result with the error's words, for the model
// to read. The agent never sees what Call closes over (a key, an endpoint).
type Tool struct {
	Name        string
	Description string
	InputSchema map[string]any
	Call        func(ctx context.Context, args json.RawMessage) (string, error)
}
