package tracker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
)

// Syncer mirrors a tracker's candidates into the store. One Pass:
//
//  1. Candidates (one conditional request when nothing changed);
//  2. a new issue becomes a card in the first eligible column (or, when
//     its input cannot be a card, a blocked card saying what to fix);
//  3. an issue whose fields changed updates its card while the card is
//     unclaimed and not running, done or cancelled (a blocked card takes
//     the fix its person made to the issue; it is not moved);
//  4. a mirrored card outside a sink whose issue left the candidates is
//     refreshed: closed or gone, it is cancelled (a running agent stops;
//     a card in review is moved to done);
//  5. a parked card whose issue changed reads the comments since it was
//     parked: a person's comment is the answer.
//
// A failing tracker touches no card: the pass ends, the outage is reported
// once (Status, the log) and the next poll tries again. A fault in one
// issue's data touches only that issue's card (isolate.go): what can be
// taken is taken (an answer with its terminal escapes removed), the rest
// is skipped with a tracker_fault event on the card and an entry in Faults,
// and the pass goes on with the other issues. A pass that fails for any
// other reason (the store) is reported through Status too.
type Syncer struct {
	Store   store.Store
	Tracker Tracker
	Board   func() board.Board
	Log     *slog.Logger // names the tracker (With("tracker", kind)); the lines add only their own attributes
	Now     func() time.Time
	// Status is told the tracker's trouble, or why the last pass failed
	// ("" when a pass went through again); the dispatcher shows it on its
	// node row (drover status errors[], tracker_error).
	Status func(msg string)
	// Faults is told the issues whose data the sync could not take as it
	// is, each time that list changes (nil: none); the dispatcher shows
	// them on its node row (drover status errors[], tracker_fault).
	Faults func([]Fault)
	// OwnLabels are the labels drover itself sets (tracker.roles): they say
	// where drover put the card, not what the issue asks, so a card does
	// not copy them (nor is it edited each time drover moves it).
	OwnLabels map[string]bool

	mu      sync.Mutex
	downAt  time.Time // when the current outage began (zero: none)
	until   time.Time // a rate limit defers polling until then
	lastErr string
	dirty   bool // the last changed pass did not finish, or left an issue to read again
	// faults are the issues whose data the last passes could not take,
	// by faultKey (what Faults was last told).
	faults map[string]Fault
}

// Deferred says until when a rate limit holds polling.
func (s *Syncer) Deferred() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.until
}

// Pass runs one sync. The error is the store's or the tracker's, and is
// reported through Status as well; either way nothing half-done is left
// (each card write is its own transaction). An issue whose data cannot be
// taken is no error of the pass: it is shown on its card and in Faults.
func (s *Syncer) Pass(ctx context.Context) error {
	if now := s.now(); now.Before(s.Deferred()) {
		return nil
	}
	issues, changed, err := s.Tracker.Candidates(ctx)
	if err != nil {
		return s.trouble(ctx, err)
	}
	if !changed && !s.dirty {
		s.fine()
		return nil
	}
	// Until this pass ends well, the next one looks again even if the
	// tracker says nothing changed: what it already told is not lost.
	s.dirty = true
	p := s.begin()
	err = p.run(ctx, issues)
	s.end(p, err == nil)
	if err != nil {
		return s.failed(ctx, err)
	}
	s.dirty = p.again
	s.fine()
	return nil
}

// run is one pass over the candidates and the cards that left them.
func (p *pass) run(ctx context.Context, issues []Issue) error {
	s, b := p.s, p.b
	cards, err := s.Store.ListCards(ctx, store.CardFilter{Tracked: true})
	if err != nil {
		return err
	}
	byKey := map[string]board.Card{}
	for _, c := range cards {
		if c.External.Tracker == s.Tracker.Kind() {
			byKey[c.External.ID] = c
		}
	}
	seen := map[string]bool{}
	var fresh []Issue
	for _, is := range issues {
		seen[is.ID] = true
		c, had := byKey[is.ID]
		if is.Fault != "" {
			// Read only in part: its card keeps its last good input.
			if err := p.fault(ctx, is, cardPtr(c, had), stageRead, "", is.Fault, true); err != nil {
				return err
			}
			if had {
				fresh = append(fresh, is) // its answer does not depend on what could not be read
			}
			continue
		}
		if !had {
			c, err := s.create(ctx, b, is)
			switch {
			case errors.Is(err, store.ErrConflict):
				continue // another process created it first
			case err != nil:
				if err := p.contain(ctx, is, nil, stageCreate, err); err != nil {
					return err
				}
				continue
			}
			byKey[is.ID] = c
		}
		fresh = append(fresh, is)
	}
	for _, is := range fresh {
		c := byKey[is.ID]
		stage := stageEdit
		if b.RoleOf(c.State) == board.RoleParked {
			stage = stageAnswer
		}
		if err := p.contain(ctx, is, &c, stage, s.update(ctx, p, b, byKey, is)); err != nil {
			return err
		}
	}
	var missing []string
	for id, c := range byKey {
		if !seen[id] && !b.RoleOf(c.State).IsSink() {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	if len(missing) == 0 {
		return nil
	}
	got, failed, err := p.refresh(ctx, missing)
	if err != nil {
		return err
	}
	for _, id := range missing {
		c := byKey[id]
		is := Issue{ID: id, Key: c.External.Key, URL: c.External.URL}
		if ferr, ok := failed[id]; ok {
			if err := p.contain(ctx, is, &c, stageRefresh, ferr); err != nil {
				return err
			}
			continue
		}
		if got, ok := got[id]; ok && got.Fault != "" {
			if err := p.fault(ctx, got, &c, stageRead, "", got.Fault, true); err != nil {
				return err
			}
			continue // not known to be closed: the card keeps its course
		}
		if err := p.contain(ctx, is, &c, stageClose, s.gone(ctx, b, c, got, id)); err != nil {
			return err
		}
	}
	return nil
}

func cardPtr(c board.Card, ok bool) *board.Card {
	if !ok {
		return nil
	}
	return &c
}

func (s *Syncer) actor() string { return "tracker:" + s.Tracker.Kind() }

func (s *Syncer) ops(b board.Board) *operator.Service {
	return &operator.Service{Store: s.Store, Board: b, Actor: s.actor(), Now: s.Now}
}

// create makes the card for a new issue.
func (s *Syncer) create(ctx context.Context, b board.Board, is Issue) (board.Card, error) {
	c, problem := cardOf(s.theirs(is))
	c.External = &board.External{Tracker: s.Tracker.Kind(), ID: is.ID, Key: is.Key, URL: is.URL}
	if problem == "" {
		col, _ := b.First(board.RoleEligible)
		c.State = col.Name
		c.StateReason = "found in " + s.Tracker.Kind() + " as " + is.Key
		out, err := s.Store.CreateCard(ctx, b.Prefix, c, s.actor())
		if err == nil {
			s.log().Info("tracker issue mirrored as a card", "card_id", out.ID, "identifier", out.Identifier, "issue", is.Key)
		}
		return out, err
	}
	col, _ := b.First(board.RoleBlocked)
	c.State = col.Name
	c.StateReason = "the issue cannot be a card as it is: " + problem
	c.BlockReason = &board.BlockReason{Kind: "invalid_input", What: problem, Where: fmt.Sprintf("%s issue %s (%s)", s.Tracker.Kind(), is.Key, is.URL)}
	out, err := s.Store.CreateCard(ctx, b.Prefix, c, s.actor())
	if err != nil {
		return out, err
	}
	// The identifier is known now: say how to continue, with the block's
	// event and comment, in one write.
	next := out
	br := *out.BlockReason
	br.How = "edit the issue (drover copies the edit onto the card), then drover card resume " + out.Identifier
	next.BlockReason = &br
	ev := board.Event{At: s.now(), CardID: out.ID, Type: board.EvBlocked, Actor: s.actor(), Reason: c.StateReason,
		Data: mustJSON(map[string]any{"kind": "invalid_input", "where": br.Where, "to": out.State})}
	s.log().Warn("tracker issue blocked: it cannot be a card as it is", "card_id", out.ID, "identifier", out.Identifier, "issue", is.Key, "problem", problem)
	if err := s.Store.Apply(ctx, store.Change{Card: &next, Events: []board.Event{ev},
		Comments: []board.Comment{{CardID: out.ID, Author: s.actor(), Body: "Blocked: " + problem, At: s.now()}}}); err != nil {
		return out, err
	}
	return s.Store.GetCard(ctx, out.ID)
}

// update copies changed fields of an issue onto its card while the card is
// unclaimed and outside a sink, and answers a parked card from a comment.
func (s *Syncer) update(ctx context.Context, p *pass, b board.Board, byKey map[string]board.Card, is Issue) error {
	c := byKey[is.ID]
	role := b.RoleOf(c.State)
	// Trackers stamp whole seconds: an update in the second the card was
	// parked may be the answer.
	if role == board.RoleParked && !is.UpdatedAt.Before(c.UpdatedAt.Truncate(time.Second)) {
		return p.answer(ctx, b, c, is)
	}
	if is.Fault != "" {
		return nil // read only in part: no edit is copied from it
	}
	// A blocked card takes the edit too (it is not moved): fixing the issue
	// and resuming the card runs the fixed input.
	if c.Claim != nil || role.IsSink() && role != board.RoleBlocked || role == board.RoleRunning {
		return nil
	}
	want, problem := cardOf(s.theirs(is))
	if problem != "" {
		return nil // the card keeps its last good input; a new card would be blocked
	}
	want.BlockedBy = s.blockers(byKey, is, c.ID)
	if want.Title == c.Title && want.Body == c.Body && slices.Equal(want.Labels, c.Labels) && want.Priority == c.Priority &&
		slices.Equal(want.BlockedBy, c.BlockedBy) && string(want.Spec) == string(c.Spec) {
		return nil
	}
	next := c
	next.Title, next.Body, next.Labels, next.Priority, next.BlockedBy, next.Spec = want.Title, want.Body, want.Labels, want.Priority, want.BlockedBy, want.Spec
	reason := "the issue " + is.Key + " changed"
	if string(want.Spec) != string(c.Spec) && !role.IsSink() {
		// As an operator's spec edit: new input, a fresh budget.
		next.RetryEpoch++
		reason += fmt.Sprintf("; its spec changed (retry epoch %d)", next.RetryEpoch)
	}
	ev := board.Event{At: s.now(), CardID: c.ID, Type: board.EvEdited, Actor: s.actor(), Reason: reason}
	err := s.Store.Apply(ctx, store.Change{Card: &next, CheckBlockers: true, Events: []board.Event{ev}})
	var cyc *store.CycleError
	switch {
	case errors.As(err, &cyc):
		s.log().Warn("tracker: the issue's blockers would make a cycle; they are not copied", "identifier", c.Identifier, "issue", is.Key, "error", err)
		return nil
	case errors.Is(err, store.ErrConflict):
		return nil // the card moved on (claimed, edited); the next pass looks again
	}
	return err
}

// theirs is the issue without the labels drover sets.
func (s *Syncer) theirs(is Issue) Issue {
	if len(s.OwnLabels) == 0 {
		return is
	}
	var ls []string
	for _, l := range is.Labels {
		if !s.OwnLabels[l] {
			ls = append(ls, l)
		}
	}
	is.Labels = ls
	return is
}

// blockers maps the issue's blockers to the cards mirroring them; a blocker
// drover has no card for (closed, out of the candidates) does not hold it.
func (s *Syncer) blockers(byKey map[string]board.Card, is Issue, self string) []string {
	out := []string{}
	for _, id := range is.BlockedBy {
		if c, ok := byKey[id]; ok && c.ID != self && !slices.Contains(out, c.ID) {
			out = append(out, c.ID)
		}
	}
	return out
}

// gone handles a card whose issue left the candidates.
func (s *Syncer) gone(ctx context.Context, b board.Board, c board.Card, got map[string]Issue, id string) error {
	is, ok := got[id]
	if ok && !is.Terminal {
		return nil // still open, no longer a candidate (a label changed): the card keeps its course
	}
	why := fmt.Sprintf("the issue %s was deleted or moved out of reach in %s", c.External.Key, s.Tracker.Kind())
	if ok {
		why = fmt.Sprintf("the issue %s is %s in %s", c.External.Key, is.State, s.Tracker.Kind())
	}
	ops := s.ops(b)
	var err error
	if b.RoleOf(c.State) == board.RoleCompleted {
		if col, has := b.First(board.RoleDone); has {
			_, err = ops.Move(ctx, c.ID, col.Name, why)
		}
	} else {
		_, err = ops.Cancel(ctx, c.ID, why)
	}
	var me *board.MoveError
	if errors.As(err, &me) || errors.Is(err, store.ErrConflict) {
		return nil
	}
	if err == nil {
		s.log().Info("tracker issue closed: card settled", "card_id", c.ID, "identifier", c.Identifier, "issue", c.External.Key, "why", why)
	}
	return err
}

func (s *Syncer) now() time.Time { return nowOr(s.Now) }

func (s *Syncer) log() *slog.Logger { return logOr(s.Log) }

// specFence is the fenced block of an issue body that holds the card's spec:
// ```drover … ```.
var specFence = regexp.MustCompile("(?s)```drover[ \t]*\r?\n(.*?)```")

// cardOf is the card an issue becomes (without state or link), and what
// keeps it from being one ("" when nothing does). Text a card cannot hold is
// made to fit (a title is one line, long text is cut, control characters
// in the body are neutralised) rather than refused:
// only a spec that is not a JSON object is a problem, because guessing what
// it meant would run an agent on the wrong input.
func cardOf(is Issue) (board.Card, string) {
	c := board.Card{Title: oneLine(is.Title), Body: is.Body, Priority: is.Priority, Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage("{}")}
	if c.Title == "" {
		c.Title = oneLine(is.Key)
	}
	if board.ValidateBody(c.Body) != nil {
		// Pasted terminal output, a stray NUL: its escapes are removed and
		// other control characters replaced, as the CLI shows agent text.
		c.Body = excerpt.Terminal(c.Body)
	}
	if len(c.Body) > board.MaxBody {
		c.Body = c.Body[:board.MaxBody]
		for !utf8.ValidString(c.Body) {
			c.Body = c.Body[:len(c.Body)-1]
		}
	}
	for _, l := range is.Labels {
		if len(c.Labels) < board.MaxLabels && board.ValidateLabels([]string{l}) == nil && !slices.Contains(c.Labels, l) {
			c.Labels = append(c.Labels, l)
		}
	}
	if c.Priority < 0 || c.Priority > 4 {
		c.Priority = 0
	}
	if m := specFence.FindStringSubmatch(is.Body); m != nil {
		raw := strings.TrimSpace(m[1])
		spec, err := board.NormalizeSpec([]byte(raw))
		if err != nil {
			return c, "the ```drover block of the issue body (the card's spec): " + err.Error()
		}
		c.Spec = spec
	}
	return c, ""
}

// oneLine makes a title fit a card's: one line, no control or invisible
// characters, at most board.MaxTitle characters.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || board.ValidateTitle(string(r)) != nil && !unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > board.MaxTitle {
		s = string([]rune(s)[:board.MaxTitle])
	}
	return s
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// OwnLabels are the labels a tracker configuration has drover set.
func OwnLabels(roles map[board.Role]string) map[string]bool {
	out := map[string]bool{}
	for _, l := range roles {
		if l != "" {
			out[l] = true
		}
	}
	return out
}
