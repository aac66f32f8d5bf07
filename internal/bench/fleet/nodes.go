package fleet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// workflow is each node's WORKFLOW.md: the default board, the sim agent,
// no dashboard.
const workflow = `---
agents:
  default: sim
  profiles:
    sim: {kind: sim}
workspace: {root: %q, cleanup: never}
dispatch:
  node: %s
  lease: %s
  poll_interval: %s
  max_concurrent: %d
server: {port: 0}
---
Fleet card {{ card.identifier }}.
`

// node is one drover serve process of the fleet.
type node struct {
	name, dir string
	cmd       *exec.Cmd
	exited    chan struct{}
	o         Options
}

func (n *node) config() string { return filepath.Join(n.dir, "WORKFLOW.md") }

// setSlots writes the node's WORKFLOW.md with max_concurrent slots; a
// running node reloads it within its next full pass.
func (n *node) setSlots(slots int) error {
	return os.WriteFile(n.config(), fmt.Appendf(nil, workflow, filepath.Join(n.dir, "workspaces"), n.name, n.o.Lease, n.o.Poll, slots), 0o644)
}

// startNode starts `drover serve` for node name in dir on the store dsn.
func startNode(o Options, dir, name, dsn string, slots int) (*node, error) {
	n := &node{name: name, dir: dir, exited: make(chan struct{}), o: o}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := n.setSlots(slots); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	n.cmd = exec.Command(o.Binary, "--config", n.config(), "--store", dsn, "serve", "--log-format", "text", "--log-level", "warn")
	n.cmd.Dir = dir
	n.cmd.Env = append(os.Environ(), "DROVER_STORE=", "OTEL_SDK_DISABLED=true")
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C of the benchmark reaches the nodes
	// through stop, not all at once from the terminal.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s serve: %v", o.Binary, err)
	}
	go func() { n.cmd.Wait(); logf.Close(); close(n.exited) }()
	return n, nil
}

// alive reports whether the process still runs.
func (n *node) alive() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// kill ends the process at once (SIGKILL): its runs are left claimed.
func (n *node) kill() {
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

// stop asks the node to stop (SIGTERM: its agents are stopped and their
// runs recorded) and kills it after grace.
func (n *node) stop(grace time.Duration) {
	if !n.alive() {
		return
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(grace):
		n.kill()
	}
}

// tail is the end of the node's log, for an error about it.
func (n *node) tail() string {
	b, err := os.ReadFile(filepath.Join(n.dir, "serve.log"))
	if err != nil {
		return ""
	}
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}

// errExited names a node that stopped on its own, with its log's end.
func (n *node) errExited() error {
	return errors.New("node " + n.name + " exited: " + n.tail())
}
