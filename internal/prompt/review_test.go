package prompt

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// The default prompt hands the next attempt what a reviewer asked and what
// check failed on the card's pull request; without a review it says nothing
// of one.
func TestDefaultPromptReview(t *testing.T) {
	tmpl, probs := Compile(DefaultPrompt, 0)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	card := board.Card{ID: "c1", Identifier: "D-1", Title: "fix it", Spec: []byte("{}")}
	pr := &board.PullRequest{Number: 12, URL: "https://github.com/acme/app/pull/12"}
	out, err := tmpl.Render(Vars{Card: card, Attempt: 2, Conversation: Conversation{Pull: pr, Review: []board.ReviewItem{
		{Kind: board.ReviewKindReview, User: "bob", State: "CHANGES_REQUESTED", Body: "please add a test"},
		{Kind: board.ReviewKindComment, User: "bob", Path: "main.go", Line: 7, Body: "off by one"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A reviewer asked for changes on PR #12:", "- bob (CHANGES_REQUESTED): please add a test", "- bob on main.go line 7: off by one"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	out, err = tmpl.Render(Vars{Card: card, Attempt: 3, Conversation: Conversation{Pull: pr, Review: []board.ReviewItem{
		{Kind: board.ReviewKindCheck, Name: "test", Summary: "2 tests failed", URL: "https://ci/1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Check `test` failed on PR #12: 2 tests failed (https://ci/1)"; !strings.Contains(out, want) || strings.Contains(out, "A reviewer") {
		t.Errorf("prompt lacks %q (or names a reviewer):\n%s", want, out)
	}
	out, _ = tmpl.Render(Vars{Card: card, Attempt: 1})
	if strings.Contains(out, "PR #") {
		t.Errorf("a card without a review mentions a PR:\n%s", out)
	}
}
