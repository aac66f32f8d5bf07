package config

import (
	"embed"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/tracker"
)

// templates holds what `drover init` writes: WORKFLOW.md, every section
// with its defaults, commented, and the tracker: sections of --tracker.
//
//go:embed templates
var templates embed.FS

// InitTemplate is the WORKFLOW.md that `drover init` writes: the settings of
// templates/WORKFLOW.md, then the default prompt. It parses cleanly as is.
var InitTemplate = readTemplate("WORKFLOW.md") + prompt.DefaultPrompt

func readTemplate(name string) string {
	b, err := templates.ReadFile("templates/" + name)
	if err != nil {
		panic(err) // embedded: only a build without the file gets here
	}
	return string(b)
}

// InitTemplateFor is InitTemplate with the tracker section of kind
// (templates/tracker-KIND.yaml, after the board; "" or native: none).
func InitTemplateFor(kind string) (string, error) {
	if kind == "" || kind == tracker.KindNative {
		return InitTemplate, nil
	}
	if kind != tracker.KindGitHub && kind != tracker.KindLinear {
		return "", fmt.Errorf("--tracker: %q is not a tracker; use github or linear (or leave it out for drover's own board)", kind)
	}
	board, rest, _ := strings.Cut(InitTemplate, "# Agent profiles.")
	return board + readTemplate("tracker-"+kind+".yaml") + "# Agent profiles." + rest, nil
}
