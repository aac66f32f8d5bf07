package dispatch

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/linear"
)

// LinearGraphQLTool is Symphony's tool for a Linear board: the agent's own
// GraphQL query against the board's Linear API, with drover's key.
const LinearGraphQLTool = "linear_graphql"

// runTools are the extra tools a run on this board gets (agent.Invocation
// Tools): on a Linear board, linear_graphql; none otherwise. Only kinds
// that offer tools to the model (codex app-server) use them.
func runTools(tr tracker.Config) []agent.Tool {
	if tr.Kind != tracker.KindLinear {
		return nil
	}
	return []agent.Tool{{
		Name: LinearGraphQLTool,
		Description: "Run one GraphQL query or mutation against this board's Linear API with drover's credentials " +
			"(read or update the issue, its comments, states). Returns Linear's JSON answer; GraphQL errors fail the call.",
		InputSchema: map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"query"},
			"properties": map[string]any{
				"query":     map[string]any{"type": "string", "description": "one GraphQL document (a single query or mutation)"},
				"variables": map[string]any{"type": "object", "description": "the document's variables", "additionalProperties": true},
			},
		},
		Call: func(ctx context.Context, raw json.RawMessage) (string, error) {
			var in struct {
				Query     string          `json:"query"`
				Variables json.RawMessage `json:"variables"`
			}
			if err := json.Unmarshal(raw, &in); err != nil {
				return "", errors.New("arguments must be a JSON object {\"query\": string, \"variables\"?: object}")
			}
			return linear.GraphQL(ctx, tr, nil, in.Query, in.Variables)
		},
	}}
}
