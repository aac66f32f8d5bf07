package tracker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Channel is the outbox channel of tracker projections.
const Channel = "tracker"

// Projection is the payload of one tracker outbox row: what one event of a
// mirrored card shows in the tracker, applied in order (a move, then a
// comment). Each op is idempotent but the comment, which comes last, so a
// retry after a partial failure repeats nothing the tracker already shows.
type Projection struct {
	Tracker    string     `json:"tracker"`
	IssueID    string     `json:"issue_id"`
	IssueKey   string     `json:"issue_key,omitempty"`
	Identifier string     `json:"identifier"`
	From       board.Role `json:"from,omitempty"`
	To         board.Role `json:"to,omitempty"`
	Comment    string     `json:"comment,omitempty"`
}

// moves are the event types that move a card between columns.
var moves = map[string]bool{
	board.EvCreated: true, board.EvMoved: true, board.EvClaimed: true, board.EvFinished: true, board.EvReleased: true,
	board.EvRetry: true, board.EvDeferred: true, board.EvBlocked: true, board.EvGaveUp: true, board.EvParked: true,
	board.EvAnswered: true, board.EvResumed: true, board.EvReopened: true, board.EvCancelled: true,
	board.EvRecovered: true, board.EvLeaseLost: true,
	// The review loop of a card's pull request (its data names "to").
	board.EvPullMerged: true, board.EvPullClosed: true, board.EvReviewChangesRequested: true, board.EvCheckFailed: true,
}

// impliedRole is where an event that names no column ("to") puts the card.
var impliedRole = map[string]board.Role{
	board.EvClaimed: board.RoleRunning, board.EvAnswered: board.RoleEligible, board.EvResumed: board.RoleEligible,
	board.EvReopened: board.RoleEligible, board.EvRecovered: board.RoleEligible, board.EvCancelled: board.RoleCancelled,
}

// Projector follows the audit log and writes, for each move of a card that
// mirrors an issue of Kind, one outbox row (key "tracker/<card>/<seq>", so
// following the same events twice writes nothing new). It runs on the leader.
//
// Where it starts: the log's newest event when it starts, after Reconcile
// has written what the cards' current states need (a move drover made while
// no projector ran shows as one move to where the card is now).
type Projector struct {
	Store store.Store
	Board func() board.Board
	Kind  string
	Log   *slog.Logger
	Now   func() time.Time // nil: time.Now

	mu     sync.Mutex
	cursor int64
	last   map[string]board.Role // card id → the role last projected
}

// Reconcile starts the projector: it reads where the log ends, then for
// every mirrored card whose current role differs from the last one its
// outbox rows show, writes one move (keyed by the card's version).
func (p *Projector) Reconcile(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = map[string]board.Role{}
	evs, err := p.Store.ListEvents(ctx, store.EventFilter{Newest: true, Limit: 1})
	if err != nil {
		return err
	}
	if len(evs) > 0 {
		p.cursor = evs[len(evs)-1].Seq
	}
	cards, err := p.Store.ListCards(ctx, store.CardFilter{Tracked: true})
	if err != nil {
		return err
	}
	b := p.Board()
	for _, c := range cards {
		if c.External.Tracker != p.Kind {
			continue
		}
		last, known, err := p.lastProjected(ctx, c.ID)
		if err != nil {
			return err
		}
		role := b.RoleOf(c.State)
		if !known && p.now().Sub(c.UpdatedAt) > unknownAfter {
			// No row says what the tracker shows and the card has not moved
			// for a while: its rows were pruned by retention long after
			// they were delivered. Showing the move again would repeat
			// its comment.
			p.last[c.ID] = role
			continue
		}
		p.last[c.ID] = last
		if role == last {
			continue
		}
		pr := Projection{Tracker: p.Kind, IssueID: c.External.ID, IssueKey: c.External.Key, Identifier: c.Identifier, From: last, To: role}
		// The move happened while no projector ran: its comment too.
		switch role {
		case board.RoleBlocked:
			ev := board.Event{Type: board.EvBlocked, Reason: c.StateReason}
			if c.GaveUp != nil {
				ev.Type = board.EvGaveUp
			}
			pr.Comment = blockComment(c, ev, c.State)
		case board.RoleParked:
			q, err := p.question(ctx, c.ID)
			if err != nil {
				return err
			}
			pr.Comment = questionComment(c, q)
		}
		if err := p.write(ctx, c, fmt.Sprintf("%s/%s/v%d", Channel, c.ID, c.Version), "moved", pr); err != nil {
			return err
		}
		p.last[c.ID] = role
	}
	return nil
}

// question is the parked card's latest question (the comment routing wrote).
func (p *Projector) question(ctx context.Context, cardID string) (string, error) {
	cs, err := p.Store.ListComments(ctx, cardID)
	if err != nil {
		return "", err
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if q, ok := strings.CutPrefix(cs[i].Body, "Question: "); ok {
			return q, nil
		}
	}
	return "", nil
}

// unknownAfter: a card with no tracker rows that has not moved for this
// long had them pruned (retention keeps delivered rows for days).
const unknownAfter = 24 * time.Hour

func (p *Projector) now() time.Time { return nowOr(p.Now) }

// lastProjected is the role the card's newest tracker row moves it to; the
// eligible role when it has none (a card starts where its issue was found),
// with known false.
func (p *Projector) lastProjected(ctx context.Context, cardID string) (board.Role, bool, error) {
	rows, err := p.Store.ListOutbox(ctx, store.OutboxFilter{CardID: cardID})
	if err != nil {
		return "", false, err
	}
	last, at := board.RoleEligible, int64(-1)
	for _, r := range rows {
		if r.Channel != Channel {
			continue
		}
		var pr Projection
		if json.Unmarshal(r.Payload, &pr) != nil || pr.To == "" {
			continue
		}
		if t := r.CreatedAt.UnixNano(); t >= at {
			last, at = pr.To, t
		}
	}
	return last, at >= 0, nil
}

// Pass follows the log from where the last pass ended and writes the rows
// its moves need. It returns how many rows it wrote.
func (p *Projector) Pass(ctx context.Context) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return 0, fmt.Errorf("tracker: Projector.Pass before Reconcile")
	}
	b := p.Board()
	n := 0
	for {
		evs, err := p.Store.ListEvents(ctx, store.EventFilter{SinceSeq: p.cursor, Limit: 500})
		if err != nil {
			return n, err
		}
		cards := map[string]*board.Card{}
		for _, ev := range evs {
			if ev.CardID != "" && moves[ev.Type] {
				c, ok := cards[ev.CardID]
				if !ok {
					got, err := p.Store.GetCard(ctx, ev.CardID)
					switch {
					case err == nil:
						c = &got
					case err != store.ErrNotFound:
						return n, err
					}
					cards[ev.CardID] = c
				}
				if c != nil && c.External != nil && c.External.Tracker == p.Kind {
					wrote, err := p.event(ctx, b, *c, ev)
					if err != nil {
						return n, err
					}
					if wrote {
						n++
					}
				}
			}
			p.cursor = ev.Seq
		}
		if len(evs) < 500 {
			return n, nil
		}
	}
}

// event writes the row one event needs, if any.
func (p *Projector) event(ctx context.Context, b board.Board, c board.Card, ev board.Event) (bool, error) {
	var data map[string]any
	_ = json.Unmarshal(ev.Data, &data)
	state, _ := data["to"].(string)
	if ev.Type == board.EvCreated {
		state, _ = data["state"].(string)
	}
	if r, ok := impliedRole[ev.Type]; ok && state == "" {
		if col, ok := b.First(r); ok {
			state = col.Name
		}
	}
	if state == "" {
		state = c.State // the event does not say; the card's column now
	}
	role := b.RoleOf(state)
	last := p.last[c.ID]
	if last == "" {
		last = board.RoleEligible
	}
	pr := Projection{Tracker: p.Kind, IssueID: c.External.ID, IssueKey: c.External.Key, Identifier: c.Identifier, From: last}
	if role != last && role != "" {
		pr.To = role
	}
	switch ev.Type {
	case board.EvBlocked, board.EvGaveUp, board.EvPullClosed:
		pr.Comment = blockComment(c, ev, state)
	case board.EvParked:
		q, _ := data["question"].(string)
		pr.Comment = questionComment(c, q)
	}
	if pr.To == "" && pr.Comment == "" {
		return false, nil
	}
	if err := p.write(ctx, c, fmt.Sprintf("%s/%s/%d", Channel, c.ID, ev.Seq), ev.Type, pr); err != nil {
		return false, err
	}
	if pr.To != "" {
		p.last[c.ID] = pr.To
	}
	return true, nil
}

func (p *Projector) write(ctx context.Context, c board.Card, key, event string, pr Projection) error {
	payload, _ := json.Marshal(pr)
	err := p.Store.Apply(ctx, store.Change{Outbox: []store.OutboxItem{{Key: key, Channel: Channel, Event: event, CardID: c.ID, Payload: payload}}})
	if err == nil && p.Log != nil {
		p.Log.Debug("tracker projection queued", "card_id", c.ID, "identifier", c.Identifier, "key", key, "to", pr.To, "comment", pr.Comment != "")
	}
	return err
}

// blockComment says what is wrong, where and how to continue.
func blockComment(c board.Card, ev board.Event, state string) string {
	var sb strings.Builder
	r := c.BlockReason
	if c.State != state {
		r = nil // the card moved on since; say what the event said
	}
	if ev.Type == board.EvGaveUp {
		fmt.Fprintf(&sb, "drover gave up on %s: %s\n", c.Identifier, ev.Reason)
	} else {
		fmt.Fprintf(&sb, "drover blocked %s: %s\n", c.Identifier, ev.Reason)
	}
	if r != nil {
		fmt.Fprintf(&sb, "\n**What:** %s\n**Where:** %s\n**How to continue:** %s\n", r.What, r.Where, r.How)
	} else {
		fmt.Fprintf(&sb, "\n**How to continue:** fix the cause, then `drover card resume %s`\n", c.Identifier)
	}
	return Sign(sb.String())
}

// questionComment carries a parked card's question; a person's next comment
// on the issue is the answer.
func questionComment(c board.Card, q string) string {
	if q == "" {
		q = "(the agent asked for input without saying what)"
	}
	quoted := "> " + strings.ReplaceAll(strings.TrimSpace(q), "\n", "\n> ")
	return Sign(fmt.Sprintf("The agent working on %s asks:\n\n%s\n\nReply with a comment on this issue: drover passes the next comment to the agent as the answer (or run `drover card answer %s TEXT`).", c.Identifier, quoted, c.Identifier))
}
