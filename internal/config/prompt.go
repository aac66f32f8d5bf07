package config

import (
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/prompt"
)

// compilePrompt compiles the file's body (or prompt.DefaultPrompt when it is
// empty); each template problem is a problem at key path "prompt".
func compilePrompt(d *decoder, cfg *Config) {
	if strings.TrimSpace(cfg.Prompt) == "" {
		cfg.Prompt, cfg.PromptLine = prompt.DefaultPrompt, 0
	}
	tmpl, probs := prompt.Compile(cfg.Prompt, cfg.PromptLine)
	for _, p := range probs {
		d.probs = append(d.probs, Problem{Line: p.Line, Path: "prompt", Msg: p.Msg})
	}
	cfg.tmpl = tmpl
}

// RenderPrompt renders the prompt for one run of card. A failure (e.g. the
// template reads card.spec.plan and this card's spec has no plan) is a
// *prompt.RenderError naming the variable.
func (c *Config) RenderPrompt(card board.Card, attempt int, runID, workspace string) (string, error) {
	return c.RenderRunPrompt(card, attempt, runID, workspace, prompt.Conversation{})
}

// PromptReadsComments reports whether the run prompt may show the
// operators' comments (see prompt.Template.ReadsComments).
func (c *Config) PromptReadsComments() bool { return c.tmpl.ReadsComments() }

// RenderRunPrompt is RenderPrompt with what a human said since the last
// attempt (the template's question, answer and comments).
func (c *Config) RenderRunPrompt(card board.Card, attempt int, runID, workspace string, conv prompt.Conversation) (string, error) {
	url := ""
	if c.Server.Port != 0 && card.Identifier != "" {
		url = fmt.Sprintf("http://%s:%d/api/v1/%s", c.Server.Host, c.Server.Port, card.Identifier)
	}
	agentName := card.Agent
	if agentName == "" {
		agentName = c.Agents.Default
	}
	return c.tmpl.Render(prompt.Vars{Card: card, Attempt: attempt, RunID: runID, Workspace: workspace, URL: url, Agent: agentName, Conversation: conv})
}
