package tracker

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// What an issue becomes: text is made to fit a card, a spec that is not a
// JSON object is the one problem.
func TestCardOf(t *testing.T) {
	long := strings.Repeat("é", board.MaxTitle+10)
	for _, c := range []struct {
		name      string
		is        Issue
		title     string
		spec      string
		problem   string
		labelsLen int
	}{
		{"plain", Issue{Key: "a#1", Title: "Fix it", Body: "no spec"}, "Fix it", "{}", "", 0},
		{"spec block", Issue{Key: "a#1", Title: "x", Body: "see\n```drover\n{\"sim\": [\"succeeded\"]}\n```\n"}, "x", `{"sim":["succeeded"]}`, "", 0},
		{"bad spec", Issue{Key: "a#1", Title: "x", Body: "```drover\n[1,2]\n```"}, "x", "{}", "spec", 0},
		{"title made one line", Issue{Key: "a#1", Title: "two\nlines\u202e here"}, "two lines here", "{}", "", 0},
		{"empty title", Issue{Key: "a#7", Title: "  "}, "a#7", "{}", "", 0},
		{"long title", Issue{Key: "a#1", Title: long}, long[:len(string([]rune(long)[:board.MaxTitle]))], "{}", "", 0},
		{"labels kept that fit", Issue{Key: "a#1", Title: "x", Labels: []string{"bug", "bug", strings.Repeat("l", 100)}}, "x", "{}", "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, problem := cardOf(c.is)
			if got.Title != c.title || string(got.Spec) != c.spec || (problem == "") != (c.problem == "") || !strings.Contains(problem, c.problem) || len(got.Labels) != c.labelsLen {
				t.Errorf("cardOf = title %q spec %s labels %v, problem %q", got.Title, got.Spec, got.Labels, problem)
			}
		})
	}
}

// Comments drover writes carry the marker; a person's do not.
func TestMine(t *testing.T) {
	if !Mine(Sign("hello")) || Mine("hello") {
		t.Fatal("Mine/Sign disagree")
	}
	c := board.Card{Identifier: "DRV-3", State: "blocked", BlockReason: &board.BlockReason{What: "w", Where: "here", How: "drover card resume DRV-3"}}
	got := blockComment(c, board.Event{Type: board.EvGaveUp, Reason: "budget ran out"}, "blocked")
	for _, want := range []string{"gave up on DRV-3", "**What:** w", "**Where:** here", "**How to continue:** drover card resume DRV-3", Marker} {
		if !strings.Contains(got, want) {
			t.Errorf("block comment lacks %q:\n%s", want, got)
		}
	}
}
