package chaos_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/testkit"
)

// Timing of every cluster: short leases so recovery is exercised many times
// in a run, a fast retry schedule and a small attempt budget so every card
// settles soon after the faults stop.
const (
	lease        = 3 * time.Second
	pollInterval = 500 * time.Millisecond
	maxAttempts  = 2
)

// agentScript is the command agent. It records "start" and "end" lines in
// the side-channel file (each an O_APPEND write far below PIPE_BUF, so lines
// never interleave), sleeps a random short while and exits 0 or 1 at random.
// SIGTERM (drover stopping it) writes an end line too; SIGKILL (Pdeathsig
// when its drover is killed) cannot, and the test then uses the last moment
// it saw the process alive.
const agentScript = `#!/bin/bash
side=%q
now() { date +%%s%%N; }
line() { echo "$1 $DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $$ $DROVER_NODE $(now) $DROVER_RUN_ID $2" >> "$side"; }
trap 'line end term; exit 143' TERM
line start -
ms=$(( %d + RANDOM %% %d ))
sleep "$(( ms / 1000 )).$(printf %%03d $(( ms %% 1000 )))" &
wait $!
code=$(( RANDOM %% 100 < %d ? 1 : 0 ))
line end $code
exit $code
`

const workflow = `---
store: %q
agents:
  default: sh
  profiles:
    sh: {kind: command, command: %q, timeout: 2m, stall_timeout: 2m}
policy:
  max_attempts: %d
  backoff: {base: 300ms, max: 1s, jitter: 0}
dispatch:
  node: %s
  lease: %s
  poll_interval: %s
  max_concurrent: %d
workspace:
  root: %q
notify:
  webhook: {url: %q, secret: chaos, events: [blocked, gave_up, parked, profile_paused]}
  allow_private: true
server: {port: 0}
---
Work on {{ card.identifier }}: {{ card.title }} (attempt {{ attempt }}).
`

// clusterOpts shapes one chaos run.
type clusterOpts struct {
	DSN         string
	Nodes       int
	Slots       int // max_concurrent per node
	MinSleepMS  int // agent sleep is MinSleepMS (default 200) + [0, MaxSleepMS)
	MaxSleepMS  int
	FailPercent int // chance of exit 1
}

// cluster is N drover serve processes on one store, their agents' side
// channel and a webhook receiver.
type cluster struct {
	t      *testing.T
	bin    string // the drover binary under test
	o      clusterOpts
	dir    string
	side   string
	nodes  []*node
	hook   *testkit.Receiver
	cfg    *config.Config // node 0's, for the board
	mon    *monitor
	mu     sync.Mutex
	kills  []killRec
	starts int
}

type killRec struct {
	Node string
	At   time.Time
}

// node is one named drover serve; each life is a new process.
type node struct {
	name   string
	config string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	since  time.Time // when the current life started (zero when down)
	lives  int
	logf   *os.File
}

func newCluster(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	if o.Slots == 0 {
		o.Slots = 4
	}
	if o.MinSleepMS == 0 {
		o.MinSleepMS = 200
	}
	if o.MaxSleepMS == 0 {
		o.MaxSleepMS = 1200
	}
	dir := t.TempDir()
	c := &cluster{t: t, bin: testkit.Binary(t), o: o, dir: dir, side: filepath.Join(dir, "side.log"), hook: testkit.NewReceiver(t)}
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(agentScript, c.side, o.MinSleepMS, o.MaxSleepMS, o.FailPercent)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.side, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < o.Nodes; i++ {
		name := fmt.Sprintf("n%d", i+1)
		nd := filepath.Join(dir, name)
		if err := os.MkdirAll(nd, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(nd, "WORKFLOW.md")
		text := fmt.Sprintf(workflow, o.DSN, script, maxAttempts, name, lease, pollInterval, o.Slots, filepath.Join(nd, "ws"), c.hook.URL+"/hook")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, &node{name: name, config: path})
	}
	cfg, err := config.Load(c.nodes[0].config)
	if err != nil {
		t.Fatal(err)
	}
	c.cfg = cfg
	// Create the schema once, before several processes race to migrate it.
	testkit.Open(t, o.DSN).Close()
	c.mon = newMonitor(c.side)
	t.Cleanup(func() {
		if t.Failed() {
			for _, nd := range c.nodes {
				t.Logf("%s log tail:\n%s", nd.name, c.tail(nd, 25))
			}
		}
	})
	t.Cleanup(c.stopAll)
	return c
}

// drover runs a one-shot CLI command against node 0's config.
func (c *cluster) drover(args ...string) ([]byte, error) {
	cmd := exec.Command(c.bin, append([]string{"--config", c.nodes[0].config}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("drover %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out, nil
}

// addCards creates n cards through the CLI.
func (c *cluster) addCards(n int) error {
	for i := 0; i < n; i++ {
		if _, err := c.drover("card", "add", "--title", fmt.Sprintf("chaos card %d", i)); err != nil {
			return err
		}
	}
	return nil
}

// start starts a new life of nd (it must be down), failing the test if it
// cannot. Only from the test's goroutine; others call restart.
func (c *cluster) start(nd *node) {
	c.t.Helper()
	if err := c.startLife(nd); err != nil {
		c.t.Fatal(err)
	}
}

// restart is start for the fault driver's goroutines: a failure is
// reported and the test goes on to its checks.
func (c *cluster) restart(nd *node) {
	if err := c.startLife(nd); err != nil {
		c.t.Errorf("restarting %s: %v", nd.name, err)
	}
}

func (c *cluster) startLife(nd *node) error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd != nil {
		return nil
	}
	nd.lives++
	f, err := os.OpenFile(filepath.Join(filepath.Dir(nd.config), fmt.Sprintf("serve-%03d.log", nd.lives)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "--config", nd.config, "serve", "--log-level", "info")
	cmd.Stdout, cmd.Stderr = f, f
	// The test's own death must not leave drovers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	nd.cmd, nd.logf, nd.since, nd.exited = cmd, f, time.Now(), make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(cmd, nd.exited)
	c.mu.Lock()
	c.starts++
	c.mu.Unlock()
	return nil
}

// kill SIGKILLs nd's current life and waits until it is gone.
func (c *cluster) kill(nd *node) bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return false
	}
	at := time.Now()
	_ = nd.cmd.Process.Signal(syscall.SIGKILL)
	<-nd.exited
	nd.logf.Close()
	nd.cmd, nd.since = nil, time.Time{}
	c.mu.Lock()
	c.kills = append(c.kills, killRec{Node: nd.name, At: at})
	c.mu.Unlock()
	return true
}

// exitedEarly reports a life that ended without being killed (a crash of
// drover itself, e.g. refusing to start).
func (nd *node) exitedEarly() bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return false
	}
	select {
	case <-nd.exited:
		return true
	default:
		return false
	}
}

func (nd *node) up() (bool, time.Time) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.cmd != nil, nd.since
}

// stop ends nd gracefully (SIGTERM), as an operator would.
func (c *cluster) stop(nd *node) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.exited:
	case <-time.After(30 * time.Second):
		_ = nd.cmd.Process.Signal(syscall.SIGKILL)
		<-nd.exited
	}
	nd.logf.Close()
	nd.cmd, nd.since = nil, time.Time{}
}

func (c *cluster) stopAll() {
	for _, nd := range c.nodes {
		c.stop(nd)
	}
	c.mon.close()
}

func (c *cluster) numKills() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.kills)
}

// tail returns the last lines of nd's logs (for failure messages).
func (c *cluster) tail(nd *node, n int) string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(nd.config), fmt.Sprintf("serve-%03d.log", nd.lives)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// delivery is one notification the receiver accepted.
type delivery struct {
	Key   string
	Event string
	At    time.Time
}

// deliveries are the notifications the webhook receiver accepted, in order.
func (c *cluster) deliveries() []delivery {
	var out []delivery
	for _, q := range c.hook.Delivered("") {
		out = append(out, delivery{Key: q.Header.Get("X-Drover-Delivery"), Event: q.Header.Get("X-Drover-Event"), At: q.At})
	}
	return out
}

// life is one agent process as the side channel and /proc saw it.
type life struct {
	Card, Node, RunID string
	Attempt, PID      int
	Start             time.Time
	End               time.Time // end line, or the last moment seen alive
	Ended             bool      // an end line was written
	Code              string    // "0", "1", "term", or "" (killed)
	Gone              bool      // the process is gone
	lastAlive         time.Time
}

// monitor tails the side channel and watches each agent's pid, so an agent
// killed without writing its end line still gets an end time: the last
// moment it was seen alive (a lower bound, so overlaps found are real).
type monitor struct {
	path  string
	mu    sync.Mutex
	lives map[string]*life // by run id
	order []*life
	bad   []string // malformed lines, duplicate starts
	done  chan struct{}
	wg    sync.WaitGroup
	off   int64
	part  string
}

func newMonitor(path string) *monitor {
	m := &monitor{path: path, lives: map[string]*life{}, done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			m.poll()
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *monitor) close() {
	select {
	case <-m.done:
		return
	default:
	}
	close(m.done)
	m.wg.Wait()
}

func (m *monitor) poll() {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	// Liveness first, so a pid seen alive now was alive before any line read below.
	for _, l := range m.order {
		if l.Gone || l.Ended {
			continue
		}
		if testkit.Alive(l.PID) {
			l.lastAlive = now
		} else {
			l.Gone = true
			l.End = l.lastAlive
		}
	}
	f, err := os.Open(m.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(m.off, io.SeekStart); err != nil {
		return
	}
	b, _ := io.ReadAll(f)
	m.off += int64(len(b))
	data := m.part + string(b)
	lines := strings.Split(data, "\n")
	m.part = lines[len(lines)-1]
	sc := bufio.NewScanner(strings.NewReader(strings.Join(lines[:len(lines)-1], "\n")))
	for sc.Scan() {
		m.line(sc.Text(), now)
	}
}

// line parses "start|end IDENT ATTEMPT PID NODE UNIXNANO RUNID CODE".
func (m *monitor) line(s string, now time.Time) {
	f := strings.Fields(s)
	if len(f) != 8 {
		m.bad = append(m.bad, "malformed side-channel line: "+s)
		return
	}
	attempt, e1 := strconv.Atoi(f[2])
	pid, e2 := strconv.Atoi(f[3])
	ns, e3 := strconv.ParseInt(f[5], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil {
		m.bad = append(m.bad, "malformed side-channel line: "+s)
		return
	}
	at := time.Unix(0, ns)
	switch f[0] {
	case "start":
		if _, dup := m.lives[f[6]]; dup {
			m.bad = append(m.bad, "run "+f[6]+" started twice: "+s)
			return
		}
		l := &life{Card: f[1], Node: f[4], RunID: f[6], Attempt: attempt, PID: pid, Start: at, lastAlive: at}
		if testkit.Alive(pid) {
			l.lastAlive = now
		}
		m.lives[f[6]] = l
		m.order = append(m.order, l)
	case "end":
		l, ok := m.lives[f[6]]
		if !ok {
			m.bad = append(m.bad, "end without start: "+s)
			return
		}
		l.Ended, l.End, l.Code = true, at, f[7]
	default:
		m.bad = append(m.bad, "malformed side-channel line: "+s)
	}
}

// snapshot returns copies of every life (call after the agents settled).
func (m *monitor) snapshot() ([]life, []string) {
	m.poll()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]life, 0, len(m.order))
	for _, l := range m.order {
		out = append(out, *l)
	}
	return out, append([]string(nil), m.bad...)
}
