package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// probeTimeout bounds one probe run of bwrap.
const probeTimeout = 10 * time.Second

// probeRecheck is how long a probe's answer is kept: installing bwrap
// must not need a restart.
const probeRecheck = 30 * time.Second

type probeAnswer struct {
	why string
	at  time.Time
}

var (
	probeMu   sync.Mutex
	probeSeen = map[string]probeAnswer{}
)

// Probe says why c's sandbox cannot start on this machine ("" when it can):
// it runs bwrap once with c's namespaces around /bin/true (bwrap missing, or
// user namespaces refused, show here). The answer is kept per bwrap program
// and network mode for a while (or until Forget).
func Probe(c Config) string {
	key := Program() + "\x00" + c.Network
	probeMu.Lock()
	defer probeMu.Unlock()
	if a, ok := probeSeen[key]; ok && time.Since(a.at) < probeRecheck {
		return a.why
	}
	why := probe(c)
	probeSeen[key] = probeAnswer{why, time.Now()}
	return why
}

// Forget drops the kept probe answers (the config was reloaded: bwrap may
// have been installed meanwhile).
func Forget() {
	probeMu.Lock()
	defer probeMu.Unlock()
	probeSeen = map[string]probeAnswer{}
}

func probe(c Config) string {
	prog := Program()
	path, err := exec.LookPath(prog)
	if err != nil {
		return fmt.Sprintf("bwrap (%s) is not installed (Debian: apt-get install -y bubblewrap): %v", prog, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, Config{Kind: c.Kind, Network: c.Network}.Args(Run{}, []string{"/bin/true"})...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Sprintf("bwrap (%s) cannot start a sandbox here (user namespaces refused?): %s", path, msg)
	}
	return ""
}
