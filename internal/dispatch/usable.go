package dispatch

import (
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/config"
)

// usability remembers which profiles this node cannot run, and why (their
// program is missing here). A missing program is looked for again after a
// while: installing it must not need a restart or a config edit.
type usability struct {
	mu  sync.Mutex
	why map[string]string    // profile → why it cannot run here ("" = fine)
	at  map[string]time.Time // when why was found
	// probe is Options.SandboxProbe (nil: sandbox.Probe).
	probe func(sandbox.Config) string
	// told are the profiles whose sandbox this node has said it cannot
	// start (logged once, not every tick).
	told map[string]bool
}

// usableRecheck is how long a missing program is believed missing.
const usableRecheck = 30 * time.Second

// check says why this node cannot run profile ("" when it can), and keeps
// the node's status (its unusable agents) in step.
func (u *usability) check(cfg *config.Config, profile string, node *self) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if why, ok := u.why[profile]; ok && (why == "" || time.Since(u.at[profile]) < usableRecheck) {
		return why
	}
	p, _ := cfg.Agents.Profile(profile)
	p = resolveCommand(cfg, p)
	why := ""
	if !registry.InProcess(p.Kind) {
		cmd := p.Command
		if cmd == "" {
			cmd = p.Kind
		}
		if _, err := exec.LookPath(cmd); err != nil {
			why = fmt.Sprintf("agent %s: command %q is not found on this node (agents.profiles.%s.command)", profile, cmd, profile)
		}
	}
	if why == "" {
		why = sandboxWhy(cfg, profile, u.probe)
	}
	if u.why == nil {
		u.why, u.at = map[string]string{}, map[string]time.Time{}
	}
	u.why[profile], u.at[profile] = why, time.Now()
	node.update(func(st *NodeStatus) {
		if why != "" {
			if st.Unusable == nil {
				st.Unusable = map[string]string{}
			}
			st.Unusable[profile] = why
		} else if st.Unusable != nil {
			delete(st.Unusable, profile)
		}
	})
	return why
}

// reset forgets every finding (the config changed).
func (u *usability) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.why, u.at = nil, nil
}
