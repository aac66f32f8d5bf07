package sqlstore

import (
	"context"

	"github.com/drover-dev/drover/internal/board"
)

// ListComments implements store.Store.
func (d *DB) ListComments(ctx context.Context, cardID string) ([]board.Comment, error) {
	rows, err := d.db.QueryContext(ctx, d.q(`SELECT id, card_id, author, body, at FROM comments WHERE card_id = ? ORDER BY at, id`), cardID)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []board.Comment{}
	for rows.Next() {
		var c board.Comment
		var at int64
		if err := rows.Scan(&c.ID, &c.CardID, &c.Author, &c.Body, &at); err != nil {
			return nil, d.wrap(err)
		}
		c.At = fromMs(at)
		out = append(out, c)
	}
	return out, d.wrap(rows.Err())
}
