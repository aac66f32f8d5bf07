package gitwork

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/osteele/liquid"
	"golang.org/x/text/unicode/norm"

	"github.com/drover-dev/drover/internal/board"
)

// Bounds of a branch name drover makes.
const (
	maxBranch    = 100 // bytes of the whole name
	maxComponent = 60  // bytes of one /-separated part
)

// BranchName renders tmpl (Liquid with card.id, card.identifier,
// card.title, card.state, card.priority, card.labels, card.agent and
// card.spec; "" is DefaultBranch) for card and makes the result a safe
// branch name: each /-separated part folded to lower-case ASCII letters,
// digits, '.', '_' and '-', no "..", no leading '-' or '.', no ".lock",
// bounded in length. Whatever the card's title holds, the name is one git
// accepts and stays under refs/heads/.
func BranchName(tmpl string, card board.Card) (string, error) {
	if tmpl == "" {
		tmpl = DefaultBranch
	}
	out, err := render(tmpl, card)
	if err != nil {
		return "", err
	}
	name := safeBranch(out)
	if name == "" || !ValidBranch(name) {
		name = "drover/" + slugify(card.Identifier+"-"+card.ID, maxComponent, "card")
	}
	return name, nil
}

func newEngine() *liquid.Engine {
	e := liquid.NewEngine()
	e.StrictVariables()
	return e
}

func render(tmpl string, card board.Card) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workspace.git.branch: the template failed: %v", r)
		}
	}()
	spec := map[string]any{}
	if len(card.Spec) > 0 {
		_ = json.Unmarshal(card.Spec, &spec)
	}
	labels := make([]any, len(card.Labels))
	for i, l := range card.Labels {
		labels[i] = l
	}
	vars := map[string]any{"card": map[string]any{
		"id": card.ID, "identifier": card.Identifier, "title": card.Title, "state": card.State,
		"priority": card.Priority, "labels": labels, "agent": card.Agent, "spec": spec,
	}}
	s, serr := newEngine().ParseAndRenderString(tmpl, vars)
	if serr != nil {
		return "", fmt.Errorf("workspace.git.branch: %s", oneLine(serr.Error()))
	}
	return s, nil
}

// checkTemplate compiles tmpl and renders it for a sample card, so an
// unknown variable is found when WORKFLOW.md is loaded.
func checkTemplate(tmpl string) error {
	_, err := render(tmpl, board.Card{ID: "c1", Identifier: "DRV-1", Title: "a title", Spec: json.RawMessage("{}")})
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "workspace.git.branch: "))
	}
	if !strings.Contains(tmpl, "card.identifier") && !strings.Contains(tmpl, "card.id") {
		return fmt.Errorf("%q does not name the card (card.identifier or card.id): two cards would share a branch and a pull request", tmpl)
	}
	return nil
}

// safeBranch makes s a branch name of slugged parts ("" when nothing is left).
func safeBranch(s string) string {
	var parts []string
	total := 0
	for _, p := range strings.Split(s, "/") {
		p = slugify(p, maxComponent, "")
		if p == "" {
			continue
		}
		if total+len(p)+1 > maxBranch {
			if room := maxBranch - total - 1; room >= 8 {
				parts = append(parts, slugify(p, room, ""))
			}
			break
		}
		parts = append(parts, p)
		total += len(p) + 1
	}
	return strings.Join(parts, "/")
}

// slugify folds s to lower-case ASCII letters, digits, '.', '_' and '-'
// (accents dropped, everything else a '-'), no repeats of '-' or '.', none
// at either end, no ".lock" ending, at most max bytes; def when empty.
func slugify(s string, max int, def string) string {
	var b strings.Builder
	last := rune('-')
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			r = unicode.ToLower(r)
		case r == '.' || r == '_' || r == '-':
		default:
			r = '-'
		}
		if (r == '-' || r == '.') && (last == '-' || last == '.') {
			continue
		}
		b.WriteRune(r)
		last = r
		if b.Len() >= max {
			break
		}
	}
	out := strings.Trim(b.String(), "-._")
	for strings.HasSuffix(out, ".lock") {
		out = strings.Trim(strings.TrimSuffix(out, ".lock"), "-._")
	}
	if out == "" {
		return def
	}
	return out
}

// ValidBranch reports whether name is a branch name git accepts (the rules
// of git check-ref-format --branch), at most 200 bytes.
func ValidBranch(name string) bool {
	if name == "" || name == "@" || len(name) > 200 || strings.HasPrefix(name, "-") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, p := range strings.Split(name, "/") {
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".lock") {
			return false
		}
	}
	return true
}
