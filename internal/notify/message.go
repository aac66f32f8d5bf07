// Package notify turns drover's outcomes into messages for people: Slack
// incoming webhooks and generic signed webhooks.
//
// The flow is the outbox pattern. When the dispatcher routes a run, it builds
// a Message and writes the rows Enqueue returns in the same transaction as the
// card's new state (store.Change.Outbox). A Worker later delivers due rows
// with retries and backoff. Every row has a unique key, "<message key>/<channel>",
// and the store ignores a second insert of an existing key, so one (card, run,
// outcome) yields one message per channel however many times routing is
// repeated or the process restarts. Delivery is at-least-once: a receiver may
// see a message again only if drover crashed between the HTTP response and
// recording it; the idempotency key in every payload lets it drop the copy.
//
// A failing channel never changes a card's outcome: delivery errors stay on
// the outbox row (attempts, last_error, dead) and show through Status.
package notify

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// Event names. Events lists them, the names notify.*.events accept.
const (
	EventBlocked        = "blocked"
	EventGaveUp         = "gave_up"
	EventParked         = "parked"
	EventProfilePaused  = "profile_paused"
	EventProfileResumed = "profile_resumed"
	EventSpendPaused    = "spend_paused" // the day's spend cap was reached; dispatch paused
	EventConfigError    = "config_error"
	EventSucceeded      = "succeeded"
	EventDone           = "done"
	EventCancelled      = "cancelled"
)

// Channel names, as stored in store.OutboxItem.Channel.
const (
	ChannelSlack   = "slack"
	ChannelWebhook = "webhook"
)

// DefaultEvents are what a channel gets when its events list is empty: the
// facts that need a person. Transient retries are never notified.
var DefaultEvents = []string{EventBlocked, EventGaveUp, EventParked, EventProfilePaused, EventSpendPaused, EventConfigError}

// aliases are other names callers use for an event; Enqueue stores the
// canonical one so receivers and events lists see one name.
var aliases = map[string]string{"spend_cap": EventSpendPaused, "give_up": EventGaveUp}

// Message is one channel-independent notification. Its JSON (snake_case) is
// the outbox payload and, plus idempotency_key, the generic webhook body.
type Message struct {
	Event string    `json:"event"`
	Key   string    `json:"key"` // card/run/outcome for card events; see Key
	At    time.Time `json:"at"`
	// Card is nil for events about no card (profile_paused, spend_paused,
	// config_error).
	Card   *CardRef           `json:"card"`
	Run    *RunRef            `json:"run"`
	Reason *board.BlockReason `json:"reason"` // what, where, how
	GaveUp *board.GaveUp      `json:"gave_up"`
	// Agent is the agent profile concerned (the card's, or the paused one).
	Agent string `json:"agent,omitempty"`
	// Question is what a parked card's agent asked.
	Question string `json:"question,omitempty"`
	// Text is one human line; Enqueue fills it from the fields when empty.
	Text string `json:"text"`
}

// CardRef names the card a message is about.
type CardRef struct {
	ID         string `json:"id"`
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	State      string `json:"state"`
	URL        string `json:"url,omitempty"` // the dashboard's card page, when known
}

// RunRef names the run a message is about.
type RunRef struct {
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
	Kind    string `json:"kind,omitempty"`
}

// CardOf is the CardRef of c; url may be "".
func CardOf(c board.Card, url string) *CardRef {
	return &CardRef{ID: c.ID, Identifier: c.Identifier, Title: c.Title, State: c.State, URL: url}
}

// RunOf is the RunRef of r.
func RunOf(r board.Run) *RunRef {
	return &RunRef{ID: r.ID, Attempt: r.Attempt, Kind: r.Kind}
}

// Key is the message key of a card event: one message per (card, run, outcome).
func Key(cardID, runID, outcome string) string {
	return cardID + "/" + runID + "/" + outcome
}

// Canonical returns the canonical name of an event ("spend_cap" → "spend_paused").
func Canonical(event string) string {
	if c, ok := aliases[event]; ok {
		return c
	}
	return event
}

// Wants reports whether a channel with this events list gets event. An empty
// list means DefaultEvents. Names outside Events (a retry, a
// deferral) are never wanted.
func Wants(events []string, event string) bool {
	event = Canonical(event)
	if !slices.Contains(Events, event) {
		return false
	}
	if len(events) == 0 {
		events = DefaultEvents
	}
	for _, e := range events {
		if Canonical(e) == event {
			return true
		}
	}
	return false
}

// Enqueue returns the outbox rows for m: one per configured channel (a
// non-empty URL) whose events list wants m.Event. Write them with the routing
// change (store.Change.Outbox); rows whose key already exists are ignored by
// the store. Each row's key is "<m.Key>/<channel>". When m.Key is empty it is
// Key(card, run, event) for card events, else "<event>/<at, RFC 3339>".
// A give-up is one message: send EventGaveUp alone, not blocked as well.
func Enqueue(cfg Config, m Message) []store.OutboxItem {
	m.Event = Canonical(m.Event)
	if m.At.IsZero() {
		m.At = time.Now()
	}
	m.At = m.At.UTC()
	if m.Key == "" {
		m.Key = defaultKey(m)
	}
	if m.Text == "" {
		m.Text = m.Line()
	}
	var cardID, runID string
	if m.Card != nil {
		cardID = m.Card.ID
	}
	if m.Run != nil {
		runID = m.Run.ID
	}
	var out []store.OutboxItem
	for _, ch := range []struct {
		name   string
		url    string
		events []string
	}{
		{ChannelSlack, cfg.Slack.URL, cfg.Slack.Events},
		{ChannelWebhook, cfg.Webhook.URL, cfg.Webhook.Events},
	} {
		if ch.url == "" || !Wants(ch.events, m.Event) {
			continue
		}
		payload, err := json.Marshal(m)
		if err != nil { // cannot happen: Message has only plain fields
			continue
		}
		out = append(out, store.OutboxItem{
			Key: m.Key + "/" + ch.name, Channel: ch.name, Event: m.Event,
			CardID: cardID, RunID: runID, Payload: payload,
			CreatedAt: m.At, NextAt: m.At,
		})
	}
	return out
}

func defaultKey(m Message) string {
	if m.Card != nil {
		run := ""
		if m.Run != nil {
			run = m.Run.ID
		}
		return Key(m.Card.ID, run, m.Event)
	}
	return m.Event + "/" + m.At.Format(time.RFC3339Nano)
}

// Line is a one-line summary of m, for Text and logs.
func (m Message) Line() string {
	subject := "drover"
	if m.Card != nil {
		subject = nonEmpty(m.Card.Identifier, m.Card.ID)
		if m.Card.Title != "" {
			subject += fmt.Sprintf(" %q", m.Card.Title)
		}
	}
	var s string
	switch m.Event {
	case EventGaveUp:
		s = subject + " gave up"
		if g := m.GaveUp; g != nil {
			s += fmt.Sprintf(" after %d attempts: %s", g.Attempts, nonEmpty(g.Kind, g.Reason))
		}
	case EventBlocked:
		s = subject + " is blocked"
		if m.Reason != nil && m.Reason.What != "" {
			s += ": " + m.Reason.What
		}
	case EventParked:
		s = subject + " is waiting for an answer"
		if m.Question != "" {
			s += ": " + m.Question
		}
	case EventProfilePaused:
		s = "agent profile " + nonEmpty(m.Agent, "?") + " is paused"
		if m.Reason != nil && m.Reason.What != "" {
			s += ": " + m.Reason.What
		}
	case EventSpendPaused:
		s = "dispatch paused: the daily spend cap was reached"
	case EventConfigError:
		s = "config error"
		if m.Reason != nil && m.Reason.What != "" {
			s += ": " + m.Reason.What
		}
	default:
		s = subject + ": " + m.Event
	}
	return oneLine(s)
}

func nonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// oneLine puts s on one line of at most 300 runes.
func oneLine(s string) string { return excerpt.Line(s, 300) }
