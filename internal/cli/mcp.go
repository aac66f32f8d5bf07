package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/agentchan"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/mcpserver"
	"github.com/drover-dev/drover/internal/version"
)

// Agent-side commands: drover mcp (the MCP server an agent run starts) and
// drover run ask|block|comment|progress|done (the same calls for scripts).
// Inside a run drover serve started, both go through the run's capability
// (DROVER_AGENT_SOCKET and DROVER_AGENT_TOKEN, internal/agentchan): the
// agent never holds the store. Outside one (an operator at a terminal,
// DROVER_AGENT_SOCKET unset) they open the store named by --store,
// DROVER_STORE or WORKFLOW.md and act on the run named by DROVER_RUN_ID,
// under the same fences. Nothing secret is ever an argument.

// agentService returns the caller for the run of this environment.
func (a *app) agentService(c *cobra.Command) (agentcall.Caller, error) {
	if cl := agentchan.FromEnv(); cl != nil {
		return cl, nil
	}
	if !c.Flags().Changed("config") {
		if p := os.Getenv("DROVER_CONFIG"); p != "" {
			a.configPath = p
		}
	}
	run := os.Getenv("DROVER_RUN_ID")
	if run == "" {
		return nil, usagef("DROVER_RUN_ID is not set: %s serves the run drover started it in; run it from an agent's environment", c.CommandPath())
	}
	err := a.open(c.Context(), readsStore)
	if err != nil {
		return nil, err
	}
	cfg := a.cfg.Full
	if cfg == nil { // no WORKFLOW.md: the defaults
		if cfg, err = config.Parse(nil, "."); err != nil {
			return nil, err
		}
	}
	return &agentcall.Service{Store: a.st, RunID: run, Limits: dispatch.AgentLimits(cfg)}, nil
}

func (a *app) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "MCP server over stdio for the current agent run (tools drover_card, drover_block, drover_ask_human, …)",
		Long: `drover mcp speaks the Model Context Protocol on stdin and stdout. An agent run starts it
as a tool server (drover wires it into claude, codex, gemini and opencode profiles unless
the profile says mcp: off; a command agent may start it itself). It serves only the run
of its environment (the run's capability DROVER_AGENT_SOCKET and DROVER_AGENT_TOKEN,
which drover serve sets; outside a serve, DROVER_RUN_ID in the store of --store) with the tools:

  drover_card                      the card, earlier attempts, the question and answer, comments
  drover_block(what, where, how)   block the card with the agent's own reason (never retried)
  drover_ask_human(question, options?)  park the card until a human answers
  drover_comment(text)             a comment on the card
  drover_progress(note)            a progress note in the event log
  drover_done(summary)             the agent's summary; the card goes to review

A call from a run that has ended or lost its claim is refused with a tool error and
changes nothing; a run blocks, asks or finishes once.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.agentService(c)
			if err != nil {
				return err
			}
			return mcpserver.Serve(c.Context(), svc, version.Get().Version)
		},
	}
}

func (a *app) runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "What an agent script tells drover about its own run: ask, block, comment, progress, done",
		Long: `drover run is drover mcp's tools for scripts: each subcommand acts on the run of its
environment (through the capability DROVER_AGENT_SOCKET and DROVER_AGENT_TOKEN that
drover serve sets for every agent; outside a serve, DROVER_RUN_ID in the store of
--store) and is refused, changing nothing, once that run has ended or lost its claim.`,
	}
	one := func(use, short string, n int, call func(ctx context.Context, svc agentcall.Caller, args []string, c *cobra.Command) (any, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(n), RunE: func(c *cobra.Command, args []string) error {
			svc, err := a.agentService(c)
			if err != nil {
				return err
			}
			v, err := call(c.Context(), svc, args, c)
			var ie *agentcall.InputError
			if errors.As(err, &ie) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(v)
			}
			fmt.Fprintln(a.out, "ok")
			return nil
		}}
	}
	ask := one("ask QUESTION", "Park the card with a question for a human (--option for choices); the run ends input_required", 1,
		func(ctx context.Context, svc agentcall.Caller, args []string, c *cobra.Command) (any, error) {
			opts, _ := c.Flags().GetStringArray("option")
			return svc.Ask(ctx, args[0], opts)
		})
	ask.Flags().StringArray("option", nil, "a choice the human may pick (repeatable)")
	block := one("block --what W --where P --how H", "Block the card with the agent's own reason; never retried", 0,
		func(ctx context.Context, svc agentcall.Caller, _ []string, c *cobra.Command) (any, error) {
			f := c.Flags()
			what, _ := f.GetString("what")
			where, _ := f.GetString("where")
			how, _ := f.GetString("how")
			return svc.Block(ctx, what, where, how)
		})
	block.Flags().String("what", "", "what is wrong (required)")
	block.Flags().String("where", "", "where: the file, field or part of the card at fault (required)")
	block.Flags().String("how", "", "how a human can continue (required)")
	cmd.AddCommand(ask, block,
		one("comment TEXT", "Comment on the card as the agent", 1, func(ctx context.Context, svc agentcall.Caller, args []string, _ *cobra.Command) (any, error) {
			return svc.Comment(ctx, args[0])
		}),
		one("progress NOTE", "Record a one-line progress note", 1, func(ctx context.Context, svc agentcall.Caller, args []string, _ *cobra.Command) (any, error) {
			return svc.Progress(ctx, args[0])
		}),
		one("done SUMMARY", "Say the work is done, with a summary for review", 1, func(ctx context.Context, svc agentcall.Caller, args []string, _ *cobra.Command) (any, error) {
			return svc.Done(ctx, strings.TrimSpace(args[0]))
		}),
	)
	return cmd
}

// mcpCommand is the drover binary agent runs start as their MCP server: this
// very executable ("" when it cannot be found, and then no run is wired).
func mcpCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
