package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// PendingNotifications lists the notifications not yet delivered nor
// dropped, oldest first: waiting for a channel, being retried, or due.
func (s *Service) PendingNotifications(ctx context.Context) ([]store.OutboxItem, error) {
	return s.Store.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true)})
}

// DropNotification gives up a pending notification by its id: it is never
// delivered, and the drop is in the audit log.
func (s *Service) DropNotification(ctx context.Context, id string) (store.OutboxItem, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return store.OutboxItem{}, &board.InputError{Field: "id", Msg: "is empty; pass a notification id (drover outbox ls lists them)"}
	}
	items, err := s.PendingNotifications(ctx)
	if err != nil {
		return store.OutboxItem{}, err
	}
	for _, it := range items {
		if it.ID != id {
			continue
		}
		why := "dropped by " + s.actor()
		if err := s.Store.MarkOutbox(ctx, it.ID, store.OutboxResult{At: s.now(), Dead: true, Error: why, Waiting: true}); err != nil {
			return it, err
		}
		data, _ := json.Marshal(map[string]string{"outbox_id": it.ID, "key": it.Key, "channel": it.Channel, "event": it.Event})
		ev := board.Event{At: s.now(), CardID: it.CardID, RunID: it.RunID, Type: "notification_dropped", Actor: s.actor(),
			Reason: fmt.Sprintf("%s notification %s (%s) %s", it.Channel, it.Event, it.Key, why), Data: data}
		if err := s.Store.Apply(ctx, store.Change{Events: []board.Event{ev}}); err != nil {
			return it, err
		}
		it.Dead, it.LastError = true, why
		return it, nil
	}
	return store.OutboxItem{}, &board.InputError{Field: "id", Msg: fmt.Sprintf("no pending notification %q; drover outbox ls lists the pending ones", id)}
}
