package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/excerpt"
)

// Generic webhook headers. A receiver verifies a delivery like this:
//
//	ts := r.Header.Get(HeaderTimestamp)
//	body, _ := io.ReadAll(r.Body)
//	ok := notify.VerifySignature(secret, ts, body, r.Header.Get(HeaderSignature))
//
// then rejects timestamps far from its own clock (say, more than 5 minutes,
// against replays) and drops bodies whose idempotency_key (equal to
// X-Drover-Delivery) it has already processed: delivery is at-least-once.
const (
	HeaderEvent     = "X-Drover-Event"     // the event name, e.g. gave_up
	HeaderDelivery  = "X-Drover-Delivery"  // the idempotency key
	HeaderTimestamp = "X-Drover-Timestamp" // unix seconds, as signed
	// HeaderSignature is "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)).
	// It is absent when notify.webhook.secret is empty.
	HeaderSignature = "X-Drover-Signature"
)

// webhookBody is the generic webhook's JSON: the Message plus the
// idempotency key (the outbox key, also sent as X-Drover-Delivery).
type webhookBody struct {
	Message
	IdempotencyKey string `json:"idempotency_key"`
}

func webhookPayload(m Message, key string) ([]byte, error) {
	return json.Marshal(webhookBody{Message: m, IdempotencyKey: key})
}

// Sign returns the X-Drover-Signature value for a body sent at ts (unix
// seconds, as a decimal string).
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature reports whether sig is the signature of body sent at ts
// under secret. It compares in constant time. It does not judge the
// timestamp's age: receivers should also refuse old timestamps.
func VerifySignature(secret, ts string, body []byte, sig string) bool {
	if secret == "" || ts == "" || !strings.HasPrefix(sig, "sha256=") {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(sig))
}

// Slack limits: a section's text is at most 3000 characters.
const slackTextMax = 2900

// slackPayload is the Slack incoming-webhook body: text (the notification
// fallback) and blocks (a header line, what/where/how, a context line with
// the run and the idempotency key).
func slackPayload(m Message, key string) ([]byte, error) {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type block struct {
		Type     string `json:"type"`
		Text     *text  `json:"text,omitempty"`
		Elements []text `json:"elements,omitempty"`
	}
	section := func(s string) block {
		return block{Type: "section", Text: &text{Type: "mrkdwn", Text: excerpt.Clip(s, slackTextMax)}}
	}
	var blocks []block
	blocks = append(blocks, section(slackHeadline(m)))
	if m.Reason != nil {
		for _, f := range [][2]string{{"What", m.Reason.What}, {"Where", m.Reason.Where}, {"How to continue", m.Reason.How}} {
			if f[1] != "" {
				blocks = append(blocks, section("*"+f[0]+":* "+slackEscape(f[1])))
			}
		}
	}
	if m.Question != "" {
		blocks = append(blocks, section("*Question:* "+slackEscape(m.Question)))
	}
	var ctx []string
	if m.Run != nil && m.Run.ID != "" {
		r := "run " + m.Run.ID
		if m.Run.Attempt > 0 {
			r += " · attempt " + strconv.Itoa(m.Run.Attempt)
		}
		if m.Run.Kind != "" {
			r += " · " + m.Run.Kind
		}
		ctx = append(ctx, r)
	}
	if m.Agent != "" {
		ctx = append(ctx, "agent "+m.Agent)
	}
	ctx = append(ctx, "key "+key)
	blocks = append(blocks, block{Type: "context", Elements: []text{{Type: "mrkdwn", Text: excerpt.Clip(slackEscape(strings.Join(ctx, " · ")), slackTextMax)}}})
	return json.Marshal(struct {
		Text   string  `json:"text"`
		Blocks []block `json:"blocks"`
	}{Text: nonEmpty(m.Text, m.Line()), Blocks: blocks})
}

// slackHeadline is the first block: event, card link or identifier, title.
func slackHeadline(m Message) string {
	label := map[string]string{
		EventBlocked: ":no_entry: *Blocked*", EventGaveUp: ":warning: *Gave up*",
		EventParked: ":raising_hand: *Needs an answer*", EventProfilePaused: ":double_vertical_bar: *Agent profile paused*",
		EventProfileResumed: ":arrow_forward: *Agent profile resumed*", EventSpendPaused: ":moneybag: *Spend cap reached*",
		EventConfigError: ":gear: *Config error*", EventSucceeded: ":white_check_mark: *Succeeded*",
		EventDone: ":white_check_mark: *Done*", EventCancelled: ":x: *Cancelled*",
	}[m.Event]
	if label == "" {
		label = "*" + slackEscape(m.Event) + "*"
	}
	s := label
	if c := m.Card; c != nil {
		id := slackEscape(nonEmpty(c.Identifier, c.ID))
		if c.URL != "" {
			id = "<" + c.URL + "|" + id + ">"
		}
		s += " · " + id
		if c.Title != "" {
			s += " " + slackEscape(c.Title)
		}
	}
	if g := m.GaveUp; g != nil {
		s += "\nGave up after " + strconv.Itoa(g.Attempts) + " attempts: " + slackEscape(nonEmpty(g.Kind, "unknown"))
	}
	if m.Card == nil || m.Reason == nil {
		s += "\n" + slackEscape(nonEmpty(m.Text, m.Line()))
	}
	return s
}

// slackEscape escapes the three characters Slack's mrkdwn treats as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
