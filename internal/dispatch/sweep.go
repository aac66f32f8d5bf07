package dispatch

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/workspace"
)

// sweepPage bounds the cards one sweep looks at: the most recently updated
// cards in the sink columns that workspace.cleanup clears.
const sweepPage = 100

// sweeper remembers how far the workspace sweep has looked: the updated_at
// of the newest sink card it saw.
type sweeper struct{ upTo time.Time }

// run removes, per workspace.cleanup, the workspaces of cards an
// operator moved into a sink (card mv … done, card cancel): routing cleans up
// only after a run, and such moves happen between runs. It looks only at
// cards updated since its last sweep, newest first, and only at this node's
// own disk; a claimed card, or one with a run live here, keeps its workspace.
func (w *sweeper) run(ctx context.Context, st store.Store, cfg *config.Config, log *slog.Logger, homes string, live func(cardID string) bool) {
	var sinks []string
	for _, c := range cfg.Board.Columns {
		if workspace.ShouldRemove(cfg.Workspace.Cleanup, c.Role) {
			sinks = append(sinks, c.Name)
		}
	}
	if len(sinks) == 0 {
		return
	}
	cards, err := st.ListCards(ctx, store.CardFilter{States: sinks, Claimed: store.Bool(false), Order: store.OrderUpdated, Limit: sweepPage})
	if err != nil || len(cards) == 0 || !cards[0].UpdatedAt.After(w.upTo) {
		return
	}
	upTo := cards[0].UpdatedAt
	for _, c := range cards {
		if !c.UpdatedAt.After(w.upTo) {
			break
		}
		if live(c.ID) {
			// Its job is still winding down (routed, not yet forgotten):
			// look at it again next sweep rather than skip it for good.
			upTo = c.UpdatedAt.Add(-time.Nanosecond)
			continue
		}
		if dir, err := workspace.Path(cfg.Workspace.Root, c.Identifier); err == nil {
			removeWorkspace(log, cfg, c, dir, homes)
		}
	}
	if upTo.After(w.upTo) {
		w.upTo = upTo
	}
}

// removesWorkspace says whether workspace.cleanup removes the workspace
// of a card in c's column.
func removesWorkspace(cfg *config.Config, c board.Card) bool {
	return workspace.ShouldRemove(cfg.Workspace.Cleanup, cfg.Board.RoleOf(c.State))
}

// removeWorkspace runs the before_remove hook and removes c's workspace dir
// (routing's, after a run into a sink; the sweep's, after an operator's
// move), if this node has it, and c's sandbox home under homes.
func removeWorkspace(log *slog.Logger, cfg *config.Config, c board.Card, dir, homes string) {
	removeCardHome(log, homes, c)
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	hooks := cfg.Hooks
	env := envSlice(map[string]string{"DROVER_CARD_ID": c.ID, "DROVER_CARD_IDENTIFIER": c.Identifier, "DROVER_WORKSPACE": dir})
	_ = hooks.Run(context.Background(), workspace.HookBeforeRemove, dir, env, nil)
	if err := workspace.Remove(cfg.Workspace.Root, dir); err != nil {
		log.Warn("could not remove a workspace", "card_id", c.ID, "identifier", c.Identifier, "workspace", dir, "err", err)
		return
	}
	log.Info("workspace removed", "card_id", c.ID, "identifier", c.Identifier, "workspace", dir, "state", c.State, "cleanup", cfg.Workspace.Cleanup)
}
