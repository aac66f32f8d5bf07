package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sandbox"
)

// sandboxes checks every profile's sandbox key.
func (d *decoder) sandboxes(cfg *Config, baseDir string) {
	hidden := sandboxHidden(cfg, baseDir)
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents.Profiles)) {
		p, path := cfg.Agents.Profiles[name], "agents.profiles."+name+".sandbox"
		switch {
		case p.Sandbox == nil:
		case registry.InProcess(p.Kind):
			d.errf(path, "the %s kind runs inside drover, not as a program: a sandbox has nothing to hold; remove the key", p.Kind)
		default:
			d.sandbox(path, p.Sandbox, hidden)
		}
	}
}

// sandbox checks a profile's sandbox key at path and expands its read and
// write entries (~ is the operator's home) in place.
func (d *decoder) sandbox(path string, sb *sandbox.Config, hidden []string) {
	d.oneOf(path+".kind", sb.Kind, sandbox.Kinds, "a sandbox kind")
	if sb.Network == "" {
		sb.Network = sandbox.NetworkOn
	}
	d.oneOf(path+".network", sb.Network, sandbox.NetworkModes, "a network mode")
	home, _ := os.UserHomeDir()
	for _, l := range []struct {
		key   string
		paths []string
	}{{"read", sb.Read}, {"write", sb.Write}} {
		for i, p := range l.paths {
			p = sandbox.Expand(p, home)
			if why := sandbox.CheckPath(p, home, hidden); why != "" {
				d.errf(fmt.Sprintf("%s.%s[%d]", path, l.key, i), "%s", why)
				continue
			}
			l.paths[i] = filepath.Clean(p)
		}
	}
}

// sandboxHidden are the directories no sandbox entry may expose: the one
// holding a SQLite store (the default one when store is unset) and the
// workspace root.
func sandboxHidden(cfg *Config, baseDir string) []string {
	hidden := []string{cfg.Workspace.Root}
	switch dsn := cfg.Store.DSN; {
	case strings.HasPrefix(dsn, "sqlite:"):
		hidden = append(hidden, filepath.Dir(strings.TrimPrefix(dsn, "sqlite:")))
	case dsn == "":
		hidden = append(hidden, filepath.Join(baseDir, ".drover"))
	}
	return hidden
}
