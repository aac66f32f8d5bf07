package prompt

import (
	"fmt"

	"github.com/drover-dev/drover/internal/board"
	"strings"
	"time"
)

// Conversation is what a human said to the agent since it last ran: the
// question the agent parked on, the human's answer, and the operators'
// comments since the last attempt started. The template reads it as
// question, answer and comments; a resumed session receives it as
// ResumeMessage.
type Conversation struct {
	Question string    // the question of the card's latest park ("" = none)
	Answer   string    // the answer given after that park ("" = none yet)
	Comments []Comment // operators' comments since the last attempt started, oldest first
	// Verify is what the last attempt's verify step found when it failed:
	// the command, its exit and its last output ("" when it passed or none ran).
	Verify string
	// Changes is what the last attempt did to the card's git branch
	// (workspace.git), nil when there was none or no git: the changes
	// variable.
	Changes *board.Changes
	// Review is what a reviewer or a check asked of the card's pull
	// request since the last attempt (the review variable), and Pull the
	// pull request (the pull_request variable); nil when none.
	Review []board.ReviewItem
	Pull   *board.PullRequest
}

// Comment is one operator comment, as the template sees it (comments[i].author,
// .at, .text).
type Comment struct {
	Author string
	At     time.Time
	Text   string
}

// Answered reports whether the conversation carries a human's answer.
func (c Conversation) Answered() bool { return c.Answer != "" }

// ResumeMessage is the next user message of a resumed agent session: the
// answer to the question it asked, then the comments since, then the cue to
// go on. The session already holds the task, so the card is not repeated.
func ResumeMessage(identifier string, c Conversation) string {
	var b strings.Builder
	if c.Question != "" {
		fmt.Fprintf(&b, "You asked: %s\n\n", c.Question)
	}
	fmt.Fprintf(&b, "The answer:\n%s\n", c.Answer)
	writeComments(&b, c.Comments)
	fmt.Fprintf(&b, "\nContinue the work on %s from where you stopped.\n", identifier)
	return b.String()
}

func writeComments(b *strings.Builder, cs []Comment) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("\nComments since your last attempt:\n")
	for _, cm := range cs {
		fmt.Fprintf(b, "- %s (%s): %s\n", cm.Author, cm.At.UTC().Format(time.RFC3339), cm.Text)
	}
}

// bindings of the conversation: question and answer are strings ("" when
// none), comments a list of {author, at, text}.
func (c Conversation) bindings() map[string]any {
	comments := make([]any, len(c.Comments))
	for i, cm := range c.Comments {
		comments[i] = map[string]any{"author": cm.Author, "at": cm.At.UTC().Format(time.RFC3339), "text": cm.Text}
	}
	return map[string]any{"question": c.Question, "answer": c.Answer, "comments": comments, "verify": c.Verify, "changes": changesBinding(c.Changes),
		"review": reviewBinding(c.Review), "pull_request": pullBinding(c.Pull)}
}

// reviewBinding is the review variable: a list of {kind, user, state,
// body, path, line, name, summary, url}, every field present.
func reviewBinding(items []board.ReviewItem) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = map[string]any{"kind": it.Kind, "user": it.User, "state": it.State, "body": it.Body, "path": it.Path,
			"line": it.Line, "name": it.Name, "summary": it.Summary, "url": it.URL}
	}
	return out
}

// pullBinding is the pull_request variable: number (0 when none), url,
// branch, state, head_sha.
func pullBinding(p *board.PullRequest) map[string]any {
	var pr board.PullRequest
	if p != nil {
		pr = *p
	}
	return map[string]any{"number": pr.Number, "url": pr.URL, "branch": pr.Branch, "state": pr.State, "head_sha": pr.HeadSHA}
}

// changesBinding is the changes variable: the last attempt's branch, its
// number of commits, files, insertions, deletions, whether it left the
// tree dirty and whether it changed anything; "" and zeros when none.
func changesBinding(ch *board.Changes) map[string]any {
	var c board.Changes
	if ch != nil {
		c = *ch
	}
	return map[string]any{"branch": c.Branch, "base": c.Base, "head": c.Head, "commits": len(c.Commits), "files": c.Files,
		"insertions": c.Insertions, "deletions": c.Deletions, "dirty": c.Dirty, "changed": c.Changed()}
}
