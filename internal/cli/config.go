package cli

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
)

// errConfig marks an invalid WORKFLOW.md (exit 2).
var errConfig = errors.New("invalid config")

// loadedConfig is the config as the CLI's read and operator commands need it.
type loadedConfig struct {
	Board      board.Board
	StoreDSN   string
	AgentNames []string
	Full       *config.Config // nil when no WORKFLOW.md exists
}

// loadConfig reads WORKFLOW.md; a missing file means the defaults, so the
// board commands work in any directory.
func loadConfig(path string) (*loadedConfig, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return &loadedConfig{Board: board.Default()}, nil
	}
	c, err := config.Load(path)
	if err != nil {
		if strings.HasPrefix(err.Error(), path) {
			// config.Load already names the file (and the line).
			return nil, fmt.Errorf("%w: %v", errConfig, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", errConfig, path, err)
	}
	return loadedFrom(c), nil
}

// loadedFrom is the loaded form of a parsed WORKFLOW.md.
func loadedFrom(c *config.Config) *loadedConfig {
	lc := &loadedConfig{Board: c.Board, StoreDSN: c.Store.DSN, Full: c}
	for name := range c.Agents.Profiles {
		lc.AgentNames = append(lc.AgentNames, name)
	}
	sort.Strings(lc.AgentNames)
	return lc
}

// fullConfig is the loaded WORKFLOW.md, or the defaults when there is none.
func (a *app) fullConfig() *config.Config {
	if a.cfg != nil && a.cfg.Full != nil {
		return a.cfg.Full
	}
	cfg, err := config.Parse([]byte("---\n---\n"), a.configDir())
	if err != nil {
		panic("default config does not parse: " + err.Error())
	}
	return cfg
}
