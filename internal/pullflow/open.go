package pullflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Channel is the outbox channel of the forge's rows; EventOpen the event
// of a row that opens (or finds) a card's pull request.
const (
	Channel   = "forge"
	EventOpen = "pull_open"
)

// OpenPayload is a pull_open row's payload.
type OpenPayload struct {
	CardID     string `json:"card_id"`
	Identifier string `json:"identifier"`
	RunID      string `json:"run_id"`
	Attempt    int    `json:"attempt"`
	Branch     string `json:"branch"`
	Base       string `json:"base"`
	Head       string `json:"head"` // the commit pushed
	Title      string `json:"title"`
	Draft      bool   `json:"draft,omitempty"`
	IssueURL   string `json:"issue_url,omitempty"` // the tracker issue the card mirrors
	IssueKey   string `json:"issue_key,omitempty"`
}

// OpenKey is the idempotency key of a card's branch's pull request: one row
// per card and branch, so a retry, a crash or a second node adds nothing.
func OpenKey(cardID, branch string) string { return "pull:" + cardID + ":" + branch }

// OpenRow is the outbox row that opens the pull request of the branch run
// pushed; ok is false when run pushed nothing.
func OpenRow(c board.Card, run board.Run, draft bool) (store.OutboxItem, bool) {
	ch := run.Changes
	if ch == nil || ch.Pushed == "" || ch.Branch == "" {
		return store.OutboxItem{}, false
	}
	p := OpenPayload{CardID: c.ID, Identifier: c.Identifier, RunID: run.ID, Attempt: run.Attempt, Branch: ch.Branch,
		Base: ch.BaseBranch, Head: ch.Pushed, Title: c.Title, Draft: draft}
	if e := c.External; e != nil {
		p.IssueURL, p.IssueKey = e.URL, e.Key
	}
	b, _ := json.Marshal(p)
	return store.OutboxItem{Key: OpenKey(c.ID, ch.Branch), Channel: Channel, Event: EventOpen, CardID: c.ID, RunID: run.ID, Payload: b}, true
}

// title is the pull request's title: the card's, on one line, bounded.
func title(p OpenPayload) string {
	t := strings.Join(strings.Fields(p.Title), " ")
	if t == "" {
		t = p.Identifier
	}
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	return t
}

// body is the pull request's description: the card, the run, the issue.
func body(p OpenPayload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Opened by drover for card %s (run %s, attempt %d).\n", p.Identifier, p.RunID, p.Attempt)
	switch {
	case p.IssueURL != "":
		fmt.Fprintf(&b, "\nIssue: %s\n", p.IssueURL)
	case p.IssueKey != "":
		fmt.Fprintf(&b, "\nIssue: %s\n", p.IssueKey)
	}
	fmt.Fprintf(&b, "\nDrover-Card: %s\nDrover-Run: %s\n", p.Identifier, p.RunID)
	return b.String()
}
