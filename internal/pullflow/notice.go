package pullflow

import (
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// notices are the notifications of a review loop's change to card c, as
// routing sends them for a run: blocked when the change blocks the card
// (a pull request closed without merging), gave_up when a counted
// check_failed spent its budget. One message per (card, run or pull
// request version, event). Pure.
func notices(cfg *config.Config, c board.Card, ch store.Change, now time.Time) []notify.Message {
	next := ch.Card
	if next == nil || cfg.Board.RoleOf(next.State) != board.RoleBlocked || cfg.Board.RoleOf(c.State) == board.RoleBlocked {
		return nil
	}
	ev := policy.NotifyBlocked
	if next.GaveUp != nil && c.GaveUp == nil {
		ev = policy.NotifyGaveUp
	}
	m := notify.Message{Event: ev, At: now, Card: notify.CardOf(*next, ""), Reason: next.BlockReason, GaveUp: next.GaveUp}
	if ch.Run != nil {
		m.Run, m.Agent = notify.RunOf(*ch.Run), ch.Run.Agent
		m.Key = notify.Key(next.ID, ch.Run.ID, ev)
	} else {
		n := 0
		if next.PullRequest != nil {
			n = next.PullRequest.Number
		}
		m.Key = notify.Key(next.ID, fmt.Sprintf("pull-%d-v%d", n, c.Version), ev)
	}
	return []notify.Message{m}
}
