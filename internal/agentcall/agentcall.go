// Package agentcall is what a running agent may do to its own card, for
// drover mcp (the MCP tools) and drover run (the same for scripts): read the
// card, block, ask a human, comment, note progress, say it is done. A
// Service serves one run. Every call is fenced: it writes only while the
// run is open and its claim (owner, epoch) is still the card's, in one
// store.Change with those guards, so a call from a run that ended or was
// taken over is refused and changes nothing. Arguments are checked first
// (lengths, UTF-8, control characters); a run reports once (one block, ask
// or done).
package agentcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// ErrRefused marks a call drover will not take: the run has ended, its
// claim moved on, or it has reported already. Nothing was written.
var ErrRefused = errors.New("refused")

// Service is the agent side of one run.
type Service struct {
	Store store.Store
	RunID string
	Now   func() time.Time // default time.Now
	// Limits caps how many comments and progress notes the agent may write
	// (limits.agent_* in WORKFLOW.md); nil: no cap.
	Limits *Limits
}

// Limits are the caps on what an agent writes, per run and per card (its
// runs' rows the store still keeps); negative is no cap. A report needs
// none: a run reports once, within the argument limits.
type Limits struct {
	CommentsPerRun  int
	CommentsPerCard int
	ProgressPerRun  int
	ProgressPerCard int
}

// limitKeys name the WORKFLOW.md keys of the caps, by bound kind and scope.
var limitKeys = map[string][2]string{
	store.BoundComments: {"limits.agent_comments_per_run", "limits.agent_comments_per_card"},
	store.BoundProgress: {"limits.agent_progress_per_run", "limits.agent_progress_per_card"},
}

// bound is the store bound of kind under s's limits (nil: none).
func (s *Service) bound(kind string) *store.AgentBound {
	l := s.Limits
	switch {
	case l == nil:
		return nil
	case kind == store.BoundComments:
		return &store.AgentBound{Kind: kind, PerRun: l.CommentsPerRun, PerCard: l.CommentsPerCard}
	}
	return &store.AgentBound{Kind: kind, PerRun: l.ProgressPerRun, PerCard: l.ProgressPerCard}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// live reads the run and its card and checks the run may still act: open,
// its claim the card's.
func (s *Service) live(ctx context.Context) (board.Run, board.Card, error) {
	if s.RunID == "" {
		return board.Run{}, board.Card{}, &InputError{Field: "DROVER_RUN_ID", Msg: "is not set: this only works inside a run drover started"}
	}
	r, err := s.Store.GetRun(ctx, s.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return r, board.Card{}, fmt.Errorf("%w: run %s does not exist in this store (is DROVER_STORE the dispatcher's?)", ErrRefused, s.RunID)
	}
	if err != nil {
		return r, board.Card{}, err
	}
	c, err := s.Store.GetCard(ctx, r.CardID)
	if err != nil {
		return r, c, err
	}
	return r, c, s.fence(r, c)
}

// fence explains why a run may no longer act, or nil.
func (s *Service) fence(r board.Run, c board.Card) error {
	switch {
	case !r.Open():
		return fmt.Errorf("%w: run %s of %s has ended (%s); nothing was changed", ErrRefused, r.ID, c.Identifier, r.Outcome)
	case c.Claim == nil || c.Claim.Owner != r.Node || c.Claim.Epoch != r.ClaimEpoch:
		return fmt.Errorf("%w: run %s no longer holds %s (its claim was taken over or released); nothing was changed", ErrRefused, r.ID, c.Identifier)
	}
	return nil
}

// apply writes ch for run r under its fences; a refused write is explained
// from what the store holds now.
func (s *Service) apply(ctx context.Context, r board.Run, c board.Card, ch store.Change) error {
	ch.ClaimGuard = &board.Claim{Owner: r.Node, Epoch: r.ClaimEpoch}
	if ch.AgentCall == nil {
		ch.AgentCall = &store.AgentCall{RunID: r.ID, CardID: c.ID}
	}
	err := s.Store.Apply(ctx, ch)
	var le *store.LimitError
	if errors.As(err, &le) {
		key := limitKeys[le.Kind][0]
		if le.PerCard {
			key = limitKeys[le.Kind][1]
		}
		return fmt.Errorf("%w: %v (%s): nothing was written; put further notes in a file in the workspace, or say what matters in the final report", ErrRefused, le, key)
	}
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	now, _, lerr := s.live(ctx)
	if lerr != nil {
		return lerr // the run ended or lost its claim meanwhile
	}
	if ch.AgentCall.Report != nil && now.Report != nil {
		return fmt.Errorf("%w: run %s reported already (%s at %s); a run blocks, asks or finishes once", ErrRefused, r.ID, now.Report.Kind, now.Report.At.Format(time.RFC3339))
	}
	return fmt.Errorf("%w: %v", ErrRefused, err)
}

func (s *Service) actor(r board.Run) string { return "agent:" + r.Agent }

func (s *Service) event(r board.Run, typ, reason string, data map[string]any) board.Event {
	if data == nil {
		data = map[string]any{}
	}
	data["via"] = "agent"
	return board.Event{At: s.now(), CardID: r.CardID, RunID: r.ID, Type: typ, Actor: s.actor(r),
		Reason: excerpt.Line(reason, 200), Data: jsonOf(data)}
}

// report stores rep on the run, once, with its event.
func (s *Service) report(ctx context.Context, rep board.AgentReport, reason string) (board.AgentReport, error) {
	r, c, err := s.live(ctx)
	if err != nil {
		return rep, err
	}
	if r.Report != nil {
		return rep, fmt.Errorf("%w: run %s reported already (%s); a run blocks, asks or finishes once", ErrRefused, r.ID, r.Report.Kind)
	}
	rep.At = s.now()
	ch := store.Change{AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Report: &rep},
		Events: []board.Event{s.event(r, board.EvAgentReport, reason, map[string]any{"report": rep})}}
	return rep, s.apply(ctx, r, c, ch)
}

// Block reports that the card cannot go on as it is: what is wrong, where,
// and how a human can continue. The run then ends agent_blocked.
func (s *Service) Block(ctx context.Context, what, where, how string) (board.AgentReport, error) {
	var err error
	rep := board.AgentReport{Kind: board.ReportBlock}
	if rep.What, err = text("what", what, MaxWhat, true, true); err != nil {
		return rep, err
	}
	if rep.Where, err = text("where", where, MaxWhere, true, true); err != nil {
		return rep, err
	}
	if rep.How, err = text("how", how, MaxHow, true, true); err != nil {
		return rep, err
	}
	return s.report(ctx, rep, "the agent blocked the card: "+rep.What)
}

// Ask reports a question only a human can answer, with optional choices.
// The run then ends input_required and the card parks with the question.
func (s *Service) Ask(ctx context.Context, question string, options []string) (board.AgentReport, error) {
	var err error
	rep := board.AgentReport{Kind: board.ReportAsk}
	if rep.Question, err = text("question", question, MaxQuestion, true, true); err != nil {
		return rep, err
	}
	if len(options) > MaxOptions {
		return rep, &InputError{Field: "options", Msg: fmt.Sprintf("has %d choices; the limit is %d", len(options), MaxOptions)}
	}
	for i, o := range options {
		v, err := text(fmt.Sprintf("options[%d]", i), o, MaxOption, true, false)
		if err != nil {
			return rep, err
		}
		rep.Options = append(rep.Options, v)
	}
	return s.report(ctx, rep, "the agent asked: "+rep.Question)
}

// Done reports the agent's own summary of finished work; the run then
// completes (unless drover stopped it).
func (s *Service) Done(ctx context.Context, summary string) (board.AgentReport, error) {
	var err error
	rep := board.AgentReport{Kind: board.ReportDone}
	if rep.Summary, err = text("summary", summary, MaxSummary, true, true); err != nil {
		return rep, err
	}
	return s.report(ctx, rep, "the agent is done: "+rep.Summary)
}

// Comment adds a comment to the card, by the agent, while the run is live.
func (s *Service) Comment(ctx context.Context, body string) (board.Comment, error) {
	body, err := text(commentArg, body, MaxComment, true, true)
	if err != nil {
		return board.Comment{}, err
	}
	r, c, err := s.live(ctx)
	if err != nil {
		return board.Comment{}, err
	}
	cm := board.Comment{ID: board.NewID(), CardID: c.ID, Author: s.actor(r), Body: body, At: s.now()}
	ch := store.Change{Comments: []board.Comment{cm},
		AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Bound: s.bound(store.BoundComments)},
		Events:    []board.Event{s.event(r, board.EvCommented, body, map[string]any{"comment_id": cm.ID})}}
	return cm, s.apply(ctx, r, c, ch)
}

// Progress records a progress note (one line) as an event of the run.
func (s *Service) Progress(ctx context.Context, note string) (board.Event, error) {
	note, err := text("note", note, MaxProgress, true, false)
	if err != nil {
		return board.Event{}, err
	}
	r, c, err := s.live(ctx)
	if err != nil {
		return board.Event{}, err
	}
	ev := s.event(r, board.EvAgentProgress, note, map[string]any{"note": note})
	return ev, s.apply(ctx, r, c, store.Change{Events: []board.Event{ev},
		AgentCall: &store.AgentCall{RunID: r.ID, CardID: c.ID, Bound: s.bound(store.BoundProgress)}})
}

// Card is what the agent may read of its card: the card, the runs before
// this one, the latest question and answer, and the comments.
type Card struct {
	Identifier string          `json:"identifier"`
	Title      string          `json:"title"`
	Body       string          `json:"body"`
	State      string          `json:"state"`
	Labels     []string        `json:"labels"`
	Spec       json.RawMessage `json:"spec"`
	Run        RunRef          `json:"run"`
	Attempts   []RunRef        `json:"previous_attempts"`
	Question   string          `json:"question,omitempty"`
	Answer     string          `json:"answer,omitempty"`
	Comments   []board.Comment `json:"comments"`
}

// RunRef is one run as the agent sees it.
type RunRef struct {
	ID      string        `json:"id"`
	Attempt int           `json:"attempt"`
	Outcome board.Outcome `json:"outcome,omitempty"`
	Kind    string        `json:"kind,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// ReadCard returns the run's card (refused, like every call, once the run
// has ended).
func (s *Service) ReadCard(ctx context.Context) (Card, error) {
	r, c, err := s.live(ctx)
	if err != nil {
		return Card{}, err
	}
	out := Card{Identifier: c.Identifier, Title: c.Title, Body: c.Body, State: c.State, Labels: c.Labels, Spec: c.Spec,
		Run: RunRef{ID: r.ID, Attempt: r.Attempt}, Comments: []board.Comment{}}
	runs, err := s.Store.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if err != nil {
		return out, err
	}
	for _, x := range runs {
		if x.ID != r.ID {
			out.Attempts = append(out.Attempts, RunRef{ID: x.ID, Attempt: x.Attempt, Outcome: x.Outcome, Kind: x.Kind, Error: excerpt.Clip(x.Error, 500)})
		}
	}
	evs, err := s.Store.ListEvents(ctx, store.EventFilter{CardID: c.ID, Newest: true, Limit: 1000})
	if err != nil {
		return out, err
	}
	for _, e := range evs {
		switch e.Type {
		case board.EvParked:
			out.Question, out.Answer = field(e.Data, "question"), ""
		case board.EvAnswered:
			out.Answer = strings.TrimSpace(field(e.Data, "answer"))
		}
	}
	cs, err := s.Store.ListComments(ctx, c.ID)
	if err != nil {
		return out, err
	}
	if len(cs) > 50 {
		cs = cs[len(cs)-50:]
	}
	out.Comments = append(out.Comments, cs...)
	return out, nil
}
