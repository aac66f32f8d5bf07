package tracker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// One issue's data must not stop the board: a sync pass handles each issue
// on its own, and what goes wrong with one is that issue's, unless it says
// the tracker or the store is the trouble.
//
//   - The tracker's rate limit, the store being unavailable, or a context
//     that ended stop the pass (every other issue would fail the same way).
//   - The tracker failing for one issue alone (its comments, its refresh)
//     skips that issue for this pass, shown in Faults, and the next poll
//     reads it again; maxTrackerMisses such failures in a row, with no
//     answer between, are the tracker's outage and stop the pass.
//   - Anything else (an answer drover refuses, a write the store refuses
//     for its data) is the issue's: its card gets a tracker_fault event
//     saying what was skipped and why, Faults names it, and the pass goes
//     on. What can be taken is taken first: an answer's terminal escapes
//     are removed (the event says so), an issue body's control characters
//     neutralised (cardOf).

// EvFault is the audit event recorded on a card when the sync could not
// take part of its issue's data as it is: the data was neutralised and
// taken (Data.taken true) or skipped; Data names the issue, the comment
// and the stage.
const EvFault = "tracker_fault"

// Fault is one issue whose data the sync could not take as it is, as
// drover status shows it.
type Fault struct {
	Issue   string    `json:"issue"`             // the issue's key (acme/app#3, ENG-12)
	URL     string    `json:"url,omitempty"`     // the issue's address
	CardID  string    `json:"card_id,omitempty"` // its card, when it has one
	Card    string    `json:"card,omitempty"`    // the card's identifier
	Comment string    `json:"comment,omitempty"` // the comment's id, when a comment is at fault
	Stage   string    `json:"stage"`             // read, create, edit, answer, refresh, close
	Reason  string    `json:"reason"`
	Since   time.Time `json:"since"`
}

// Stages of a pass, as a Fault names them.
const (
	stageRead    = "read"    // the tracker could not read all of the issue
	stageCreate  = "create"  // making its card
	stageEdit    = "edit"    // copying its edit onto the card
	stageAnswer  = "answer"  // taking a comment as the parked card's answer
	stageRefresh = "refresh" // reading an issue that left the candidates
	stageClose   = "close"   // settling the card of a closed issue
)

// maxTrackerMisses is how many issues in a row the tracker may fail for
// before the pass takes it for an outage.
const maxTrackerMisses = 3

// pass is one sync pass's bookkeeping of faults.
type pass struct {
	s      *Syncer
	b      board.Board
	prev   map[string]Fault // the faults before this pass, by faultKey
	faults map[string]Fault // found by this pass
	misses int              // tracker failures in a row for single issues
	again  bool             // an issue is to be read again next poll
}

// begin starts a pass.
func (s *Syncer) begin() *pass {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &pass{s: s, b: s.Board(), prev: maps.Clone(s.faults), faults: map[string]Fault{}}
}

// end records the pass's faults: a pass that went through replaces them
// (it looked at every issue), one that stopped adds to them.
func (s *Syncer) end(p *pass, whole bool) {
	s.mu.Lock()
	next := p.faults
	if !whole {
		next = maps.Clone(p.prev)
		if next == nil {
			next = map[string]Fault{}
		}
		maps.Copy(next, p.faults)
	}
	same := len(next) == len(s.faults)
	for k, f := range next {
		if o, ok := s.faults[k]; !ok || o.Reason != f.Reason {
			same = false
		}
	}
	s.faults = next
	s.mu.Unlock()
	if !same && s.Faults != nil {
		s.Faults(s.CurrentFaults())
	}
}

// CurrentFaults are the issues whose data the sync could not take, oldest
// first.
func (s *Syncer) CurrentFaults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.faults))
	slices.SortFunc(out, func(a, b Fault) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.Issue, b.Issue)
	})
	return out
}

// contain decides what err, from one issue's stage, means for the pass:
// nil when the pass goes on (the fault, if any, recorded), else the error
// that stops it.
func (p *pass) contain(ctx context.Context, is Issue, c *board.Card, stage string, err error) error {
	var rl *RateLimitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &rl), errors.Is(err, store.ErrUnavailable):
		return err
	case errors.Is(err, ErrUnavailable):
		if p.misses++; p.misses >= maxTrackerMisses {
			return err
		}
		p.again = true
		return p.fault(ctx, is, c, stage, "", "the tracker did not answer for this issue; the next poll reads it again: "+err.Error(), false)
	}
	return p.fault(ctx, is, c, stage, "", err.Error(), true)
}

// answered notes that the tracker answered for an issue.
func (p *pass) answered() { p.misses = 0 }

// fault records what the pass could not take of one issue: in Faults, and
// as an event on its card when event is set and the fault is new (the same
// fault found again by a later pass is not written twice).
func (p *pass) fault(ctx context.Context, is Issue, c *board.Card, stage, comment, reason string, event bool) error {
	reason = excerpt.Clip(excerpt.Flatten(excerpt.Terminal(reason)), 500)
	f := Fault{Issue: is.Key, URL: is.URL, Comment: comment, Stage: stage, Reason: reason, Since: p.s.now()}
	if f.Issue == "" {
		f.Issue = is.ID
	}
	if c != nil {
		f.CardID, f.Card = c.ID, c.Identifier
	}
	k := faultKey(is.ID, stage, comment)
	old, known := p.prev[k]
	if known && old.Reason == f.Reason {
		f.Since = old.Since
	}
	p.faults[k] = f
	if known && old.Reason == f.Reason {
		return nil // found again: told already
	}
	log := p.s.log().With("issue", f.Issue, "stage", stage, "reason", reason)
	if c != nil {
		log = log.With("card_id", c.ID, "identifier", c.Identifier)
	}
	if comment != "" {
		log = log.With("comment", comment)
	}
	log.Warn("tracker: part of an issue skipped; the other issues go on")
	if !event || c == nil {
		return nil
	}
	return p.event(ctx, *c, is, stage, comment, "skipped: "+reason, false)
}

// settled drops the faults this pass found for an issue at a stage that
// has since gone through.
func (p *pass) settled(issue, stage string) {
	maps.DeleteFunc(p.faults, func(k string, _ Fault) bool { return strings.HasPrefix(k, faultKey(issue, stage, "")) })
}

// faultKey names one fault: an issue, a stage, a comment.
func faultKey(issue, stage, comment string) string { return issue + "\x00" + stage + "\x00" + comment }

// event records a tracker_fault event on c.
func (p *pass) event(ctx context.Context, c board.Card, is Issue, stage, comment, reason string, taken bool) error {
	data := map[string]any{"issue": is.Key, "stage": stage, "taken": taken}
	if comment != "" {
		data["comment_id"] = comment
	}
	ev := board.Event{At: p.s.now(), CardID: c.ID, Type: EvFault, Actor: p.s.actor(), Reason: excerpt.Clip(reason, 500), Data: mustJSON(data)}
	return p.s.Store.Apply(ctx, store.Change{Events: []board.Event{ev}})
}

// answer takes a person's comment made since the card was parked as the
// answer to its question. A comment with terminal escapes or other control
// characters is taken without them (said by an event on the card); one
// drover cannot take even so is skipped with the reason, and the next
// comment may answer.
func (p *pass) answer(ctx context.Context, b board.Board, c board.Card, is Issue) error {
	s := p.s
	cs, err := s.Tracker.CommentsSince(ctx, is.ID, c.UpdatedAt)
	if err != nil {
		return err
	}
	p.answered()
	for _, cm := range cs {
		if Mine(cm.Body) || strings.TrimSpace(cm.Body) == "" {
			continue
		}
		text, changed := answerText(cm.Body)
		where := fmt.Sprintf("the comment %s by %s on %s", cm.ID, cm.Author, is.Key)
		if strings.TrimSpace(text) == "" {
			if err := p.fault(ctx, is, &c, stageAnswer, cm.ID, where+" holds nothing but control characters; answer with plain text, or drover card answer "+c.Identifier+" TEXT", true); err != nil {
				return err
			}
			continue
		}
		ops := s.ops(b)
		ops.Actor = s.actor() + ":" + cm.Author
		_, err := ops.Answer(ctx, c.ID, text)
		var me *board.MoveError
		var ie *board.InputError
		switch {
		case errors.As(err, &me) || errors.Is(err, store.ErrConflict):
			return nil // no longer parked
		case errors.As(err, &ie):
			// Not an answer drover can take (too long): the next one may be.
			if err := p.fault(ctx, is, &c, stageAnswer, cm.ID, fmt.Sprintf("%s is not taken as the answer: %s; answer again, or drover card answer %s TEXT", where, ie.Msg, c.Identifier), true); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		s.log().Info("parked card answered by a tracker comment", "card_id", c.ID, "identifier", c.Identifier, "issue", is.Key, "author", cm.Author)
		p.settled(is.ID, stageAnswer) // the comments skipped before this one no longer hold the card
		if changed != "" {
			reason := fmt.Sprintf("taken: %s had %s; they were removed and the rest taken as the answer", where, changed)
			if err := p.event(ctx, c, is, stageAnswer, cm.ID, reason, true); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// answerText is a person's comment as an answer: without terminal escape
// sequences, other control characters (but line breaks and tabs) and
// invisible formatting characters, which an answer may not carry (they
// would reach the agent and every terminal that shows the card). changed
// says what was removed ("" when nothing was).
func answerText(body string) (text, changed string) {
	bad, at := rune(-1), 0
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRuneInString(body[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			bad, at = r, i
			break
		}
		i += size
	}
	if bad < 0 {
		return body, ""
	}
	what := "control characters"
	if bad == 0x1b || bad == 0x9b {
		what = "terminal escape sequences"
	}
	clean := excerpt.Terminal(body)
	return clean, fmt.Sprintf("%s (%U at byte %d)", what, bad, at)
}

// refresh reads the issues that left the candidates. When the tracker
// fails for the batch, each issue is read alone, so one issue the tracker
// cannot answer for holds only its own card: failed has its error.
func (p *pass) refresh(ctx context.Context, ids []string) (got map[string]Issue, failed map[string]error, err error) {
	got, err = p.s.Tracker.Refresh(ctx, ids)
	var rl *RateLimitError
	switch {
	case err == nil:
		p.answered()
		return got, nil, nil
	case ctx.Err() != nil || errors.As(err, &rl) || !errors.Is(err, ErrUnavailable):
		return nil, nil, err
	case len(ids) == 1:
		return nil, map[string]error{ids[0]: err}, nil
	}
	got, failed = map[string]Issue{}, map[string]error{}
	misses := 0
	for _, id := range ids {
		one, err := p.s.Tracker.Refresh(ctx, []string{id})
		switch {
		case err == nil:
			misses = 0
			p.answered()
			maps.Copy(got, one)
		case ctx.Err() != nil || errors.As(err, &rl) || !errors.Is(err, ErrUnavailable):
			return nil, nil, err
		default:
			if misses++; misses >= maxTrackerMisses {
				return nil, nil, err
			}
			failed[id] = err
		}
	}
	return got, failed, nil
}

// trouble records a failing tracker: a rate limit defers polling; any other
// failure is an outage, reported once however many polls it lasts.
func (s *Syncer) trouble(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	s.mu.Lock()
	var rl *RateLimitError
	if errors.As(err, &rl) {
		s.until = rl.Until
	}
	if s.downAt.IsZero() {
		s.downAt = s.now()
		s.log().Error("tracker unreachable; no card is touched, polling retries", "error", err) // the caller's logger names the tracker
	}
	s.mu.Unlock()
	s.status(fmt.Sprintf("%s: %v", s.Tracker.Kind(), err))
	return err
}

// failed records a pass that stopped: the tracker's trouble as trouble,
// anything else (the store) as the reason the sync is behind, logged once
// per reason and shown by drover status.
func (s *Syncer) failed(ctx context.Context, err error) error {
	var rl *RateLimitError
	if ctx.Err() != nil {
		return err
	}
	if errors.As(err, &rl) || errors.Is(err, ErrUnavailable) {
		return s.trouble(ctx, err)
	}
	msg := fmt.Sprintf("%s: the sync pass failed; it is retried at the next poll: %v", s.Tracker.Kind(), err)
	s.mu.Lock()
	again := msg == s.lastErr
	s.mu.Unlock()
	if !again {
		s.log().Error("tracker sync pass failed; retried at the next poll", "error", err)
	}
	s.status(msg)
	return err
}

// status tells Status msg once.
func (s *Syncer) status(msg string) {
	s.mu.Lock()
	changed := msg != s.lastErr
	s.lastErr = msg
	s.mu.Unlock()
	if changed && s.Status != nil {
		s.Status(msg)
	}
}

// fine records a pass that went through: an outage is over, and the
// reason of a failed pass is cleared.
func (s *Syncer) fine() {
	s.mu.Lock()
	if !s.downAt.IsZero() {
		s.log().Info("tracker reachable again", "down_for", s.now().Sub(s.downAt).Round(time.Second).String())
		s.downAt = time.Time{}
	}
	s.mu.Unlock()
	s.status("")
}
