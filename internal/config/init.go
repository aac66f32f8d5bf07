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

// sandboxLine marks the template's sandbox keys (in its real-agent
// profiles, commented like them).
const sandboxLine = "#   sandbox: {kind: bwrap}"

// InitSandbox is tmpl with its real-agent profiles' sandbox decided: on as
// written when why is "" (bwrap is here and its probe passed), else each
// sandbox key commented out once more under a line saying why, so
// uncommenting a profile never asks for a sandbox this machine cannot start.
func InitSandbox(tmpl, why string) string {
	if why == "" {
		return tmpl
	}
	why = strings.Join(strings.Fields(why), " ")
	var b strings.Builder
	for l := range strings.Lines(tmpl) {
		if i := strings.Index(l, sandboxLine); i >= 0 {
			indent := l[:i]
			fmt.Fprintf(&b, "%s#   # sandbox off: drover init found no working sandbox here: %s\n", indent, why)
			l = indent + "#   # " + strings.TrimPrefix(l[i:], "#   ")
		}
		b.WriteString(l)
	}
	return b.String()
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
