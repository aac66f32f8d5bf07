// Package operator is what a person can do to the board: add, edit, move,
// comment, block, resume, reopen, cancel and answer. The CLI and the HTTP API
// both go through it, so the rules and the audit trail are the same for both.
package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// Service applies operator actions to a store.
type Service struct {
	Store store.Store
	Board board.Board
	// Agents lists the known agent profile names; empty means "don't check".
	Agents []string
	Actor  string // e.g. "operator:alice"; default "operator"
	Now    func() time.Time
}

// NotFoundError says a card reference matched nothing.
type NotFoundError struct{ Ref string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no card has the id, identifier or tracker key %s; drover card ls lists the cards", strconv.Quote(excerpt.Clip(e.Ref, 80)))
}

func (s *Service) actor() string {
	if s.Actor == "" {
		return board.ActorOperator
	}
	return s.Actor
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Get resolves a card by id, identifier or tracker key (store.FindCard).
func (s *Service) Get(ctx context.Context, ref string) (board.Card, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return board.Card{}, &board.InputError{Field: "id", Msg: "is empty; pass a card id, identifier such as DRV-1, or tracker key such as ENG-12"}
	}
	c, err := store.FindCard(ctx, s.Store, ref)
	if errors.Is(err, store.ErrNotFound) {
		return c, &NotFoundError{Ref: ref}
	}
	return c, err
}

// Input is the operator-supplied fields of a card; nil means "not given".
type Input struct {
	Title     *string
	Body      *string
	State     *string
	Priority  *int
	Labels    *[]string
	Agent     *string
	Spec      *json.RawMessage
	BlockedBy *[]string // ids or identifiers
}

// Add creates a card. The state defaults to the board's first eligible column.
func (s *Service) Add(ctx context.Context, in Input) (board.Card, error) {
	c := board.Card{Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage("{}")}
	if col, ok := s.Board.First(board.RoleEligible); ok {
		c.State = col.Name
	}
	if in.Title == nil {
		return c, &board.InputError{Field: "title", Msg: "is required; pass --title"}
	}
	if err := s.fill(ctx, &c, in); err != nil {
		return c, err
	}
	if s.Board.RoleOf(c.State) == board.RoleRunning {
		return c, &board.InputError{Field: "state", Msg: fmt.Sprintf("%q is the running column; only the dispatcher moves cards there. Add it to an eligible column", c.State)}
	}
	return s.Store.CreateCard(ctx, s.Board.Prefix, c, s.actor())
}

// fill validates in and copies it onto c.
func (s *Service) fill(ctx context.Context, c *board.Card, in Input) error {
	if in.Title != nil {
		c.Title = strings.TrimSpace(*in.Title)
	}
	if in.Body != nil {
		c.Body = *in.Body
	}
	if in.State != nil {
		c.State = *in.State
	}
	if in.Priority != nil {
		c.Priority = *in.Priority
	}
	if in.Labels != nil {
		c.Labels = dedupe(*in.Labels)
	}
	if in.Agent != nil {
		c.Agent = *in.Agent
		if c.Agent != "" && len(s.Agents) > 0 && !contains(s.Agents, c.Agent) {
			return &board.InputError{Field: "agent", Msg: fmt.Sprintf("unknown profile %q; the profiles are %s (agents.profiles in WORKFLOW.md)", c.Agent, strings.Join(s.Agents, ", "))}
		}
	}
	if in.Spec != nil {
		spec, err := board.NormalizeSpec(*in.Spec)
		if err != nil {
			return err
		}
		c.Spec = spec
	}
	if err := board.ValidateCard(s.Board, *c); err != nil {
		return err
	}
	if in.BlockedBy != nil {
		ids := []string{}
		for i, ref := range *in.BlockedBy {
			if strings.TrimSpace(ref) == "" {
				continue // --blocked-by "" clears the list
			}
			b, err := store.FindCard(ctx, s.Store, strings.TrimSpace(ref))
			if errors.Is(err, store.ErrNotFound) {
				return &board.InputError{Field: fmt.Sprintf("blocked_by[%d]", i), Msg: "no card has the id, identifier or tracker key " + strconv.Quote(excerpt.Clip(ref, 80))}
			}
			if err != nil {
				return err
			}
			if b.ID == c.ID && c.ID != "" {
				return &board.InputError{Field: fmt.Sprintf("blocked_by[%d]", i), Msg: "a card cannot wait on itself"}
			}
			if !contains(ids, b.ID) {
				ids = append(ids, b.ID)
			}
		}
		c.BlockedBy = ids
	}
	return nil
}

// update reads the card, lets fn change it, and applies the change with a
// version guard, retrying when another writer got there first.
func (s *Service) update(ctx context.Context, ref string, fn func(c *board.Card) (store.Change, error)) (board.Card, error) {
	for try := 0; ; try++ {
		c, err := s.Get(ctx, ref)
		if err != nil {
			return c, err
		}
		next := c
		ch, err := fn(&next)
		if err != nil {
			return c, err
		}
		ch.Card = &next
		err = s.Store.Apply(ctx, ch)
		if errors.Is(err, store.ErrConflict) && try < 8 {
			continue
		}
		if err != nil {
			return c, err
		}
		return s.Store.GetCard(ctx, c.ID)
	}
}

func (s *Service) event(c *board.Card, typ, reason string, data any) board.Event {
	var raw json.RawMessage
	if data != nil {
		raw, _ = json.Marshal(data)
	}
	return board.Event{At: s.now(), CardID: c.ID, Type: typ, Actor: s.actor(), Reason: reason, Data: raw}
}

// Edit changes fields. A changed spec on a card outside the sinks opens a
// new retry epoch: the input changed, so old failures are no longer evidence.
// A spec change on a claimed card (a run is going) is refused with how to
// proceed: the running attempt was started from the old spec, and its
// outcome must not be booked against the new one (docs/design.md, retry epoch).
func (s *Service) Edit(ctx context.Context, ref string, in Input) (board.Card, error) {
	if in.State != nil {
		return board.Card{}, &board.InputError{Field: "state", Msg: "is not changed by edit; use drover card mv ID STATE"}
	}
	if in == (Input{}) {
		return board.Card{}, &board.InputError{Field: "fields", Msg: "nothing to change; give at least one of title, body, priority, labels, agent, spec, blocked_by"}
	}
	c, err := s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		oldSpec := string(c.Spec)
		if err := s.fill(ctx, c, in); err != nil {
			return store.Change{}, err
		}
		if string(c.Spec) != oldSpec && c.Claim != nil {
			return store.Change{}, &board.InputError{Field: "spec", Msg: fmt.Sprintf(
				"cannot change while %s is running (claimed by %s): the running attempt uses the old spec. Stop it first with drover card cancel %s, edit the spec, then drover card resume %s (a new retry epoch opens)",
				c.Identifier, c.Claim.Owner, c.Identifier, c.Identifier)}
		}
		var fields []string
		for name, set := range map[string]bool{"title": in.Title != nil, "body": in.Body != nil, "priority": in.Priority != nil,
			"labels": in.Labels != nil, "agent": in.Agent != nil, "spec": in.Spec != nil, "blocked_by": in.BlockedBy != nil} {
			if set {
				fields = append(fields, name)
			}
		}
		sort.Strings(fields)
		reason := "edited " + strings.Join(fields, ", ")
		if string(c.Spec) != oldSpec && !s.Board.RoleOf(c.State).IsSink() && c.Claim == nil {
			c.RetryEpoch++
			c.NextAttemptAt = nil
			reason += fmt.Sprintf("; spec changed, retry epoch %d opened", c.RetryEpoch)
		}
		return store.Change{CheckBlockers: in.BlockedBy != nil,
			Events: []board.Event{s.event(c, board.EvEdited, reason, map[string]any{"fields": fields})}}, nil
	})
	var cycle *store.CycleError
	if errors.As(err, &cycle) {
		return c, &board.InputError{Field: s.blockerField(ctx, *in.BlockedBy, cycle.Blocker), Msg: cycle.Error()}
	}
	return c, err
}

// blockerField names the entry of refs that resolves to the card id.
func (s *Service) blockerField(ctx context.Context, refs []string, id string) string {
	for i, ref := range refs {
		if b, err := store.FindCard(ctx, s.Store, strings.TrimSpace(ref)); err == nil && b.ID == id {
			return fmt.Sprintf("blocked_by[%d]", i)
		}
	}
	return "blocked_by"
}

// Move is an operator's plain move between columns.
func (s *Service) Move(ctx context.Context, ref, state, reason string) (board.Card, error) {
	return s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		if err := board.CheckMove(s.Board, c.Identifier, c.State, state, board.ByOperator); err != nil {
			return store.Change{}, err
		}
		from := c.State
		c.State = state
		c.StateReason = reasonOr(reason, "moved by operator")
		if s.Board.RoleOf(state) == board.RoleEligible {
			c.NextAttemptAt = nil
		}
		return store.Change{Events: []board.Event{s.event(c, board.EvMoved, c.StateReason, map[string]string{"from": from, "to": state})}}, nil
	})
}

// Comment adds a comment and returns it as stored (with its id).
func (s *Service) Comment(ctx context.Context, ref, text string) (board.Comment, error) {
	if err := requiredText("text", text, "is empty; write the comment text"); err != nil {
		return board.Comment{}, err
	}
	c, err := s.Get(ctx, ref)
	if err != nil {
		return board.Comment{}, err
	}
	cm := board.Comment{ID: board.NewID(), CardID: c.ID, Author: s.actor(), Body: text, At: s.now().Truncate(time.Millisecond)}
	err = s.Store.Apply(ctx, store.Change{Comments: []board.Comment{cm}, Events: []board.Event{s.event(&c, board.EvCommented, firstLine(text), map[string]string{"comment_id": cm.ID})}})
	if err != nil {
		return board.Comment{}, err
	}
	return cm, nil
}

// Block moves a card to the blocked column with the operator's reason.
func (s *Service) Block(ctx context.Context, ref, reason string) (board.Card, error) {
	if err := requiredText("reason", reason, "is required; say why the card is blocked (--reason)"); err != nil {
		return board.Card{}, err
	}
	col, _ := s.Board.First(board.RoleBlocked)
	return s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		if s.Board.RoleOf(c.State).IsSink() {
			return store.Change{}, &board.MoveError{Msg: fmt.Sprintf("%s is already in %s", c.Identifier, c.State)}
		}
		c.State = col.Name
		c.StateReason = reason
		c.NextAttemptAt = nil
		c.BlockReason = &board.BlockReason{Kind: "operator", What: reason, Where: "blocked by " + s.actor(), How: "drover card resume " + c.Identifier}
		return store.Change{Events: []board.Event{s.event(c, board.EvBlocked, reason, nil)}}, nil
	})
}

// Resume takes a card out of blocked, cancelled or parked into the eligible
// column with a new retry epoch and a fresh budget. Old runs stay in history.
func (s *Service) Resume(ctx context.Context, ref string) (board.Card, error) {
	return s.reenter(ctx, ref, board.EvResumed, board.CheckResume)
}

// Reopen takes a done, completed, cancelled or blocked card back to eligible
// with a new retry epoch.
func (s *Service) Reopen(ctx context.Context, ref string) (board.Card, error) {
	return s.reenter(ctx, ref, board.EvReopened, board.CheckReopen)
}

func (s *Service) reenter(ctx context.Context, ref, ev string, check func(board.Board, string, string) error) (board.Card, error) {
	col, _ := s.Board.First(board.RoleEligible)
	return s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		if err := check(s.Board, c.Identifier, c.State); err != nil {
			return store.Change{}, err
		}
		from := c.State
		c.State = col.Name
		c.RetryEpoch++
		c.StateReason = fmt.Sprintf("%s by operator (retry epoch %d)", ev, c.RetryEpoch)
		c.BlockReason, c.GaveUp, c.NextAttemptAt = nil, nil, nil
		return store.Change{Events: []board.Event{s.event(c, ev, c.StateReason, map[string]any{"from": from, "retry_epoch": c.RetryEpoch})}}, nil
	})
}

// Cancel moves a card to the cancelled column; a running run is stopped by
// the dispatcher when it sees the move.
func (s *Service) Cancel(ctx context.Context, ref, reason string) (board.Card, error) {
	col, ok := s.Board.First(board.RoleCancelled)
	if !ok {
		return board.Card{}, &board.MoveError{Msg: "the board has no column with role cancelled; add one to board.columns"}
	}
	return s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		if s.Board.RoleOf(c.State) == board.RoleCancelled {
			return store.Change{}, &board.MoveError{Msg: c.Identifier + " is already cancelled"}
		}
		if s.Board.RoleOf(c.State) == board.RoleDone {
			return store.Change{}, &board.MoveError{Msg: c.Identifier + " is done; reopen it first if it should change"}
		}
		c.State = col.Name
		c.StateReason = reasonOr(reason, "cancelled by operator")
		c.NextAttemptAt = nil
		return store.Change{Events: []board.Event{s.event(c, board.EvCancelled, c.StateReason, nil)}}, nil
	})
}

// Answer replies to a parked card's question and makes it eligible again.
func (s *Service) Answer(ctx context.Context, ref, text string) (board.Card, error) {
	if err := requiredText("text", text, "is empty; write the answer to the agent's question"); err != nil {
		return board.Card{}, err
	}
	col, _ := s.Board.First(board.RoleEligible)
	return s.update(ctx, ref, func(c *board.Card) (store.Change, error) {
		if s.Board.RoleOf(c.State) != board.RoleParked {
			return store.Change{}, &board.MoveError{Msg: fmt.Sprintf("%s is in %s, not awaiting an answer; use drover card comment to add a note", c.Identifier, c.State)}
		}
		c.State = col.Name
		c.StateReason = "answered by operator"
		c.NextAttemptAt = nil
		// The event carries the whole answer (and names its comment), so the
		// next attempt's prompt reads it from the event, not from comments.
		cm := board.Comment{ID: board.NewID(), CardID: c.ID, Author: s.actor(), Body: text, At: s.now()}
		return store.Change{
			Comments: []board.Comment{cm},
			Events:   []board.Event{s.event(c, board.EvAnswered, firstLine(text), map[string]string{"answer": text, "comment_id": cm.ID})},
		}, nil
	})
}

// requiredText refuses text for field when it is blank (empty says what
// to write) or not valid text.
func requiredText(field, text, empty string) error {
	if strings.TrimSpace(text) == "" {
		return &board.InputError{Field: field, Msg: empty}
	}
	return validateText(field, text)
}

func validateText(field, text string) error {
	if err := board.ValidateBody(text); err != nil {
		return &board.InputError{Field: field, Msg: err.(*board.InputError).Msg}
	}
	return nil
}

func reasonOr(r, def string) string {
	if strings.TrimSpace(r) == "" {
		return def
	}
	return r
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return excerpt.Clip(s, 200)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func dedupe(xs []string) []string {
	out := []string{}
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if !contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// ResumeAgent closes a paused or open agent profile breaker, so dispatch for
// the profile starts again (the next failure of the same kind pauses it again).
func (s *Service) ResumeAgent(ctx context.Context, name string) (store.AgentState, error) {
	if len(s.Agents) > 0 && !contains(s.Agents, name) {
		return store.AgentState{}, &board.InputError{Field: "name", Msg: fmt.Sprintf("unknown agent profile %q; the profiles are %s", name, strings.Join(s.Agents, ", "))}
	}
	st := store.AgentState{Name: name, State: "closed", Reason: "resumed by " + s.actor(), UpdatedAt: s.now(), Version: -1}
	ev := board.Event{At: s.now(), Type: "agent_resumed", Actor: s.actor(), Reason: "agent profile " + name + " resumed", Data: json.RawMessage(fmt.Sprintf(`{"agent":%q}`, name))}
	return st, s.Store.Apply(ctx, store.Change{AgentState: &st, Events: []board.Event{ev}})
}
