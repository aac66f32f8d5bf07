package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/store"
)

// maxConversationEvents bounds how far back in a card's history the
// question and its answer are looked for.
const maxConversationEvents = 1000

// conversation is what a human said to the agent before run cur: the
// question of the card's latest park (from its parked event), the answer
// given after it (from the answered event), and the operators' comments
// since the previous attempt started. resume is the agent session to
// continue: the one of the run that parked, when that run is the card's
// latest, ran on the same profile, and the question has been answered
// since (on another profile, a fallback, the session is a new one, with the
// question and answer as text in its prompt).
//
// readsComments says whether the run's prompt template can show comments:
// a card's first run reads nothing at all when it cannot.
func (r *runner) conversation(ctx context.Context, c board.Card, cur board.Run, readsComments bool) (conv prompt.Conversation, resume string, err error) {
	if cur.Attempt == 1 && cur.RetryEpoch <= 1 {
		// The card's first run ever: no run before it, so no park, no
		// answer and no session to resume; only the operators' comments,
		// which only the template shows.
		if !readsComments {
			return conv, "", nil
		}
		return r.firstConversation(ctx, c)
	}
	events, err := r.st.ListEvents(ctx, store.EventFilter{CardID: c.ID, Newest: true, Limit: maxConversationEvents})
	if err != nil {
		return conv, "", err
	}
	var parked *board.Event
	answerComment := ""
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case board.EvParked:
			parked, conv.Question, conv.Answer, answerComment = ev, eventField(ev.Data, "question"), "", ""
		case board.EvAnswered:
			if parked != nil && conv.Answer == "" {
				conv.Answer = eventField(ev.Data, "answer")
				if conv.Answer == "" {
					conv.Answer = ev.Reason // an answer recorded before events carried it whole
				}
				answerComment = eventField(ev.Data, "comment_id")
			}
		}
	}
	runs, err := r.st.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if err != nil {
		return conv, "", err
	}
	prev := previousRun(runs, cur.ID)
	if prev != nil {
		conv.Verify = verifyPrompt(prev.Verify)
		conv.Changes = prev.Changes
		conv.Review = reviewSince(events, runStart(*prev))
		conv.Pull = c.PullRequest
	}
	comments, err := r.st.ListComments(ctx, c.ID)
	if err != nil {
		return conv, "", err
	}
	for _, cm := range comments {
		if q, ok := strings.CutPrefix(cm.Body, "Question: "); ok && parked != nil && conv.Question == "" &&
			strings.HasPrefix(cm.Author, "agent:") && !cm.At.After(parked.At) {
			conv.Question = q // a park recorded before its event carried the question
		}
		if cm.ID == answerComment || !byOperator(cm.Author) || (prev != nil && !cm.At.After(runStart(*prev))) {
			continue
		}
		conv.Comments = append(conv.Comments, prompt.Comment{Author: cm.Author, At: cm.At, Text: cm.Body})
	}
	if conv.Answered() && prev != nil && prev.ID == parked.RunID && prev.Outcome == board.OutcomeParked && prev.Agent == cur.Agent {
		resume = prev.SessionID
	}
	return conv, resume, nil
}

// firstConversation is conversation for a card's first run: every comment
// an operator wrote, and nothing to resume (two reads fewer on the hot path).
func (r *runner) firstConversation(ctx context.Context, c board.Card) (conv prompt.Conversation, resume string, err error) {
	comments, err := r.st.ListComments(ctx, c.ID)
	if err != nil {
		return conv, "", err
	}
	for _, cm := range comments {
		if byOperator(cm.Author) {
			conv.Comments = append(conv.Comments, prompt.Comment{Author: cm.Author, At: cm.At, Text: cm.Body})
		}
	}
	return conv, "", nil
}

// previousRun is the card's latest run other than cur (nil when none).
func previousRun(runs []board.Run, cur string) *board.Run {
	var prev *board.Run
	for i := range runs {
		r := &runs[i]
		if r.ID == cur {
			continue
		}
		if prev == nil || r.ClaimedAt.After(prev.ClaimedAt) || (r.ClaimedAt.Equal(prev.ClaimedAt) && r.Attempt > prev.Attempt) {
			prev = r
		}
	}
	return prev
}

// runStart is when a run's agent started (its claim time when it never did).
func runStart(r board.Run) time.Time {
	if r.StartedAt != nil {
		return *r.StartedAt
	}
	return r.ClaimedAt
}

// byOperator tells an operator's comment from drover's own (the
// dispatcher's block reasons, an agent's question).
func byOperator(author string) bool {
	return !strings.HasPrefix(author, "dispatcher:") && !strings.HasPrefix(author, "agent:")
}

// eventField reads one string field of an event's data ("" when absent).
func eventField(data json.RawMessage, key string) string {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// reviewSince is what the latest changes_requested or check_failed
// event after since handed the next attempt (its data's review list).
func reviewSince(events []board.Event, since time.Time) []board.ReviewItem {
	var out []board.ReviewItem
	for _, ev := range events {
		if (ev.Type != board.EvReviewChangesRequested && ev.Type != board.EvCheckFailed) || ev.At.Before(since) {
			continue
		}
		var d struct {
			Review []board.ReviewItem `json:"review"`
		}
		if json.Unmarshal(ev.Data, &d) == nil {
			out = d.Review
		}
	}
	return out
}
