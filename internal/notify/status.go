package notify

import (
	"context"
	"fmt"

	"github.com/drover-dev/drover/internal/store"
)

// Status sums up notification delivery for the dashboard and drover status:
// pending rows (not yet delivered, still being tried), dead rows (delivery
// abandoned; an operator should look), and the most recent delivery error
// among them, as "<channel> <event> (card <id>): <error>" ("" when none).
// Rows of other channels (tracker projections) are not counted.
func Status(ctx context.Context, st store.Store) (pending, dead int, lastError string, err error) {
	open, err := st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true)})
	if err != nil {
		return 0, 0, "", err
	}
	closed, err := st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(false)})
	if err != nil {
		return 0, 0, "", err
	}
	var last *store.OutboxItem
	consider := func(it *store.OutboxItem) {
		if it.LastError != "" && (last == nil || !it.CreatedAt.Before(last.CreatedAt)) {
			last = it
		}
	}
	for i := range open {
		if it := &open[i]; isNotify(it.Channel) {
			pending++
			consider(it)
		}
	}
	for i := range closed {
		if it := &closed[i]; isNotify(it.Channel) && it.Dead {
			dead++
			consider(it)
		}
	}
	if last != nil {
		lastError = last.Channel + " " + last.Event
		if last.CardID != "" {
			lastError += " (card " + last.CardID + ")"
		}
		lastError += fmt.Sprintf(": %s", last.LastError)
	}
	return pending, dead, lastError, nil
}

func isNotify(channel string) bool { return channel == ChannelSlack || channel == ChannelWebhook }
