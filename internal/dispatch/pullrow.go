package dispatch

import (
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/pullflow"
	"github.com/drover-dev/drover/internal/store"
)

// pullRow is the outbox row that opens the card's pull request
// (workspace.git.pull_request): added by the routing that completes a
// card after a verified success drover pushed, keyed by card and branch so
// a retry, a crash or a second node adds no second one.
func pullRow(cfg *config.Config, next board.Card, fin board.Run, dec policy.Decision) (store.OutboxItem, bool) {
	g := cfg.Workspace.Git
	if g == nil || g.PullRequests == nil || dec.Kind != policy.KindSucceeded || next.State != completedColumn(cfg) {
		return store.OutboxItem{}, false
	}
	return pullflow.OpenRow(next, fin, g.PullRequests.Draft)
}
