// Package mcpserver is drover mcp: a Model Context Protocol server, over
// stdio, that an agent run starts as a tool server. It serves the one run
// it was started for (agentcall.Service) with the tools drover_card,
// drover_ask_human, drover_block, drover_comment, drover_progress and
// drover_done. A refused call (the run ended, its claim moved on, it
// reported already, a bad argument) is a tool error whose text says why;
// it changed nothing.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drover-dev/drover/internal/agentcall"
)

// Instructions are what the server tells the agent about itself.
const Instructions = `drover dispatched you on one card and routes your run by what you report here.
Call drover_block when the card cannot be done as written (say what is wrong, where, and how a human can fix it);
drover_ask_human when only a human can decide (the run ends and the card waits for the answer);
drover_done with a summary when the work is finished; drover_comment and drover_progress to keep people informed.
drover_block, drover_ask_human and drover_done end your part: report once, then stop.`

// Inputs of the tools; the jsonschema tags are the descriptions the agent reads.
type (
	cardIn struct{}
	askIn  struct {
		Question string   `json:"question" jsonschema:"the question, complete enough to answer without reading your session"`
		Options  []string `json:"options,omitempty" jsonschema:"optional choices the human may pick from"`
	}
	blockIn struct {
		What  string `json:"what" jsonschema:"what is wrong: why the card cannot be done as it is"`
		Where string `json:"where" jsonschema:"where: the file, field, endpoint or part of the card at fault"`
		How   string `json:"how" jsonschema:"how a human can continue: the change or decision that unblocks it"`
	}
	commentIn struct {
		Text string `json:"text" jsonschema:"the comment, shown on the card"`
	}
	progressIn struct {
		Note string `json:"note" jsonschema:"one line on what you are doing now"`
	}
	doneIn struct {
		Summary string `json:"summary" jsonschema:"what you did, for the reviewer"`
	}
)

// New returns the server for svc's run.
func New(svc agentcall.Caller, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "drover", Version: version}, &mcp.ServerOptions{Instructions: Instructions})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_card", Description: "Read your card: identifier, title, body, spec, labels, the previous attempts' outcomes, the question asked and the human's answer, and comments."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ cardIn) (*mcp.CallToolResult, any, error) {
			c, err := svc.ReadCard(ctx)
			if err != nil {
				return nil, nil, err
			}
			return result(c)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_ask_human", Description: "Ask a human a question you cannot decide yourself. Your run ends as waiting for input; the card parks until someone answers, and the next attempt gets the answer. Ask once, then stop."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
			r, err := svc.Ask(ctx, in.Question, in.Options)
			if err != nil {
				return nil, nil, err
			}
			return result(map[string]any{"reported": r, "next": "stop now: the card waits for a human's answer"})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_block", Description: "Block the card: it cannot be done as written. Say what is wrong, where, and how a human can continue. The card is blocked with your words and is not retried. Block once, then stop."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in blockIn) (*mcp.CallToolResult, any, error) {
			r, err := svc.Block(ctx, in.What, in.Where, in.How)
			if err != nil {
				return nil, nil, err
			}
			return result(map[string]any{"reported": r, "next": "stop now: the card is blocked with your reason"})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_comment", Description: "Add a comment to the card, shown live to the people watching it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in commentIn) (*mcp.CallToolResult, any, error) {
			c, err := svc.Comment(ctx, in.Text)
			if err != nil {
				return nil, nil, err
			}
			return result(map[string]any{"comment_id": c.ID})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_progress", Description: "Note progress in one line; shown live on the card and in the event log."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			if _, err := svc.Progress(ctx, in.Note); err != nil {
				return nil, nil, err
			}
			return result(map[string]any{"recorded": true})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "drover_done", Description: "Say the work is done, with a summary for the reviewer. The card goes to review with your summary. Call it once, at the end."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in doneIn) (*mcp.CallToolResult, any, error) {
			r, err := svc.Done(ctx, in.Summary)
			if err != nil {
				return nil, nil, err
			}
			return result(map[string]any{"reported": r, "next": "stop now"})
		})
	return s
}

// Serve runs the server on stdin and stdout until the client goes away.
func Serve(ctx context.Context, svc agentcall.Caller, version string) error {
	return New(svc, version).Run(ctx, &mcp.StdioTransport{})
}

func result(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}
