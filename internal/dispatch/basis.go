package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
)

// basisOf is what an attempt of c on profile runs with, as a short hash per
// part (board.Run.Basis): the card's fields the agent sees, the profile's
// config, the workspace setup (hooks), the verify step and the prompt
// template. Two attempts on one basis, with no human act between them,
// had nothing new (policy.Repeats); explain names the parts that differ.
func basisOf(cfg *config.Config, c board.Card, profile string) map[string]string {
	labels := append([]string(nil), c.Labels...)
	sort.Strings(labels)
	blockers := append([]string(nil), c.BlockedBy...)
	sort.Strings(blockers)
	p, _ := cfg.Agents.Profile(profile)
	return map[string]string{
		"card":    hashOf(c.Title, c.Body, string(c.Spec), strings.Join(labels, "\x1f"), c.Agent, strings.Join(blockers, "\x1f")),
		"profile": hashOf(jsonString(p), envString(p.Env)),
		"setup":   hashOf(cfg.Hooks.AfterCreate, cfg.Hooks.BeforeRun, cfg.Hooks.AfterRun),
		"verify":  hashOf(jsonString(cfg.VerifyFor(profile))),
		"prompt":  hashOf(cfg.Prompt),
	}
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// envString is a profile's environment as sorted name=value lines (the
// profile's JSON leaves it out: its values may be secrets, here only
// hashed).
func envString(env map[string]string) string {
	lines := make([]string, 0, len(env))
	for k, v := range env {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
