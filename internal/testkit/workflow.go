package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/config"
)

// Workflow builds a WORKFLOW.md: front-matter sections, each a top-level
// key with its YAML, and a prompt template. The defaults are the smallest
// useful workflow: one sim agent and a prompt of the card's title. Set
// replaces a whole section, so the text a test gets is exactly the defaults
// plus what it said.
type Workflow struct {
	keys     []string // section order, defaults first
	sections map[string]string
	prompt   string
}

// PlannerAgents is an agents section with the sim agent as default and a
// second sim profile, planner, whose cards must carry a spec with a plan.
const PlannerAgents = `default: sim
profiles:
  sim: {kind: sim}
  planner:
    kind: sim
    spec_schema: {type: object, required: [plan], properties: {plan: {type: string}}}`

// NewWorkflow returns the default workflow.
func NewWorkflow() *Workflow {
	w := &Workflow{sections: map[string]string{}, prompt: "{{ card.title }}\n"}
	w.Set("agents", "default: sim\nprofiles:\n  sim: {kind: sim}")
	return w
}

// Set makes yaml the value of section key: a flow value or scalar
// ("{node: n1, lease: 3s}") or block lines written without the section's
// indentation ("port: 0", "node: n1\nlease: 3s"). A key set before keeps its place. It returns w.
func (w *Workflow) Set(key, yaml string) *Workflow {
	if _, ok := w.sections[key]; !ok {
		w.keys = append(w.keys, key)
	}
	w.sections[key] = strings.TrimRight(yaml, "\n")
	return w
}

// Prompt sets the prompt template (the text after the front matter).
func (w *Workflow) Prompt(text string) *Workflow {
	w.prompt = strings.TrimRight(text, "\n") + "\n"
	return w
}

// String renders the file.
func (w *Workflow) String() string {
	var b strings.Builder
	b.WriteString("---\n")
	for _, k := range w.keys {
		v := w.sections[k]
		if flow(v) {
			b.WriteString(k + ": " + v + "\n")
			continue
		}
		b.WriteString(k + ":\n")
		for _, line := range strings.Split(v, "\n") {
			if line != "" {
				line = "  " + line
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("---\n")
	b.WriteString(w.prompt)
	return b.String()
}

// flow reports whether v is written on its key's line: one line that is a
// flow collection or a plain scalar (a lone "key: value" is a block).
func flow(v string) bool {
	if strings.Contains(v, "\n") {
		return false
	}
	return strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || !strings.Contains(v, ": ")
}

// Write writes the file as dir/WORKFLOW.md and returns its path.
func (w *Workflow) Write(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "WORKFLOW.md")
	if err := os.WriteFile(path, []byte(w.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Config parses the file as if it stood in dir, failing t when drover
// refuses it.
func (w *Workflow) Config(t testing.TB, dir string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(w.String()), dir)
	if err != nil {
		t.Fatalf("testkit: WORKFLOW.md refused: %v\n%s", err, w)
	}
	return cfg
}
