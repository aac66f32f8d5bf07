package prompt

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// TestChangesVariable: the last attempt's changes are known to the checker
// (a misspelt field is refused), render in an operator's template, and the
// default prompt says when the last attempt changed nothing.
func TestChangesVariable(t *testing.T) {
	tmpl, err := problems("{{ changes.branch }}|{{ changes.commits }}|{{ changes.files }}|+{{ changes.insertions }}-{{ changes.deletions }}|{{ changes.dirty }}|{{ changes.changed }}\n")
	if err != "" {
		t.Fatalf("refused: %s", err)
	}
	ch := &board.Changes{Branch: "drover/drv-1-x", Commits: []string{"a", "b"}, Files: 3, Insertions: 10, Deletions: 4}
	out, rerr := tmpl.Render(Vars{Card: sampleCard(), Conversation: Conversation{Changes: ch}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if want := "drover/drv-1-x|2|3|+10-4|false|true\n"; out != want {
		t.Errorf("rendered %q, want %q", out, want)
	}
	if _, err := problems("{{ changes.comits }}\n"); !strings.Contains(err, "comits") {
		t.Errorf("a misspelt field: %q", err)
	}

	def, probs := Compile(DefaultPrompt, 0)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	const said = "The last attempt ended without changing anything on the branch"
	none, _ := def.Render(Vars{Card: sampleCard(), Attempt: 2, Workspace: "/w", Conversation: Conversation{Changes: &board.Changes{Branch: "drover/drv-1-x", Commits: []string{}}}})
	if !strings.Contains(none, said) || !strings.Contains(none, "drover/drv-1-x") {
		t.Errorf("the default prompt after an attempt that changed nothing:\n%s", none)
	}
	for name, v := range map[string]Vars{
		"changed": {Card: sampleCard(), Attempt: 2, Conversation: Conversation{Changes: ch}},
		"no git":  {Card: sampleCard(), Attempt: 2},
	} {
		if out, _ := def.Render(v); strings.Contains(out, said) {
			t.Errorf("%s: the default prompt says nothing changed:\n%s", name, out)
		}
	}
}
