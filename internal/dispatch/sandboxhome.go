package dispatch

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
)

// A sandboxed run's home is the card's own: homes/<safe identifier>, mode
// 0700, on the node that runs it. It outlives the run, so a CLI's session
// (claude's ~/.claude/projects, codex's ~/.codex/sessions, gemini's
// ~/.gemini/tmp, opencode's ~/.local/share/opencode) is still there when the
// card resumes after a human's answer, and it goes with the card's
// workspace (workspace.cleanup). Other cards' homes are never in sight: the
// sandbox binds this one alone, at the path HOME names.

// cardHome is the card's sandbox home under homes ("" when homes is unset).
func cardHome(homes string, c board.Card) string {
	if homes == "" {
		return ""
	}
	return filepath.Join(homes, safeName(c.Identifier))
}

// sandboxHome makes the card's home for an attempt of a sandboxed profile
// ("" for a profile without a sandbox, or when the runner keeps no homes:
// the run gets a fresh one).
func (r *runner) sandboxHome(a attempt, cfg *config.Config) (string, error) {
	prof, ok := cfg.Agents.Profile(a.profile)
	dir := cardHome(r.homes, a.card)
	if !ok || prof.Sandbox == nil || dir == "" {
		return "", nil
	}
	if err := os.MkdirAll(r.homes, 0o700); err != nil {
		return "", fmt.Errorf("sandbox homes %s: %w", r.homes, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("the card's sandbox home %s: %w", dir, err)
	}
	// An existing one is made private again (a umask, an operator's chmod).
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("the card's sandbox home %s: %w", dir, err)
	}
	return dir, nil
}

// removeCardHome removes c's sandbox home on this node, if it has one.
func removeCardHome(log *slog.Logger, homes string, c board.Card) {
	dir := cardHome(homes, c)
	if dir == "" {
		return
	}
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("could not remove a card's sandbox home", "card_id", c.ID, "identifier", c.Identifier, "home", dir, "err", err)
		return
	}
	log.Info("sandbox home removed", "card_id", c.ID, "identifier", c.Identifier, "home", dir)
}
