package prompt

import (
	"strings"
	"testing"
)

// TestDefaultPromptNamesDroversTools: the default prompt tells the agent
// every tool drover mcp serves and when to use it.
func TestDefaultPromptNamesDroversTools(t *testing.T) {
	tmpl, probs := Compile(DefaultPrompt, 0)
	if len(probs) > 0 {
		t.Fatalf("default prompt: %v", probs)
	}
	out, err := tmpl.Render(Vars{Card: sampleCard(), Attempt: 1, Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drover_block(what, where, how) when the card cannot be done as written",
		"drover_ask_human(question, options) when only a human can decide", "drover_progress(note)", "drover_comment(text)",
		"drover_done(summary) when the work is done", "drover_card", `"$DROVER_BIN" run ask|block|comment|progress|done`} {
		if !strings.Contains(out, want) {
			t.Errorf("default prompt lacks %q:\n%s", want, out)
		}
	}
}
