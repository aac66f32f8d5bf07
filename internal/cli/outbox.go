package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// outboxCmd is drover outbox ls|drop: the notifications not yet delivered.
func (a *app) outboxCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "outbox", Short: "Pending notifications: list them, drop one"}
	cmd.AddCommand(&cobra.Command{
		Use:   "ls",
		Short: "Notifications not yet delivered (waiting for a channel, retried, or due), oldest first",
		Args:  cobra.NoArgs,
		RunE: a.withStore(func(c *cobra.Command, _ []string) error {
			items, err := a.ops().PendingNotifications(c.Context())
			if err != nil {
				return err
			}
			if items == nil {
				items = []store.OutboxItem{}
			}
			if a.asJSON {
				return a.printJSON(items)
			}
			t := newTable(a.out, "ID", "CHANNEL", "EVENT", "CARD", "CREATED", "TRIES", "NEXT", "LAST ERROR")
			idents := map[string]string{} // card id -> DRV-7, looked up once each
			for _, it := range items {
				created, next := it.CreatedAt, it.NextAt
				card, ok := idents[it.CardID]
				if !ok && it.CardID != "" {
					card = it.CardID
					if cd, err := a.st.GetCard(c.Context(), it.CardID); err == nil {
						card = cd.Identifier
					}
					idents[it.CardID] = card
				}
				t.row(it.ID, it.Channel, it.Event, card, ts(&created), fmt.Sprint(it.Attempts), ts(&next), excerpt.Line(it.LastError, 80))
			}
			return t.flush()
		}),
	}, &cobra.Command{
		Use:   "drop ID",
		Short: "Give up a pending notification: it is never delivered (recorded in the audit log)",
		Args:  exactArgs(1, "ID"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			it, err := a.ops().DropNotification(c.Context(), args[0])
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(it)
			}
			fmt.Fprintf(a.out, "dropped %s notification %s (%s)\n", it.Channel, it.Event, it.Key)
			return nil
		}),
	})
	return cmd
}
