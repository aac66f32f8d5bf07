//go:build linux

package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// supervisor is the program started as the node supervisor; "" runs
// agents directly (the default, e.g. in tests of other packages).
var supervisor atomic.Value // string

// UseSupervisor makes Run start every process under the node supervisor:
// this very binary (/proc/self/exe, which survives an upgrade of the file
// on disk) re-executed with SuperviseArg, once per drover process, at the
// first run. Only a binary whose main hands SuperviseArg to Supervise may
// call it.
func UseSupervisor() { supervisor.Store("/proc/self/exe") }

// supervisorEnv is the node supervisor's whole environment.
const supervisorEnv = "DROVER_NODE_SUPERVISOR=1"

func supervisorPath() string {
	s, _ := supervisor.Load().(string)
	return s
}

// Bounds on drover's waits for the node supervisor, which may be alive but
// stuck (stopped, or its reaper thread blocked in the kernel on a hung
// mount): variables for tests.
var (
	// startBound is how long a start waits for the supervisor's answer.
	startBound = 30 * time.Second
	// reportSlack is how long, beyond the run's grace, the supervisor has
	// to send a run's status after drover asked it to kill the run.
	reportSlack = 10 * time.Second
	// sendBound is how long a request may wait for room in the socket.
	sendBound = 5 * time.Second
)

// node is drover's end of the node supervisor.
type node struct {
	conn *net.UnixConn
	proc *os.Process
	pid  int
	done chan struct{} // the supervisor process was reaped
	ps   *os.ProcessState
	stop sync.Once // see abandon

	// answered is when the supervisor last answered a start (UnixNano):
	// one working through a long queue of starts is slow, not stuck.
	answered atomic.Int64

	mu      sync.Mutex
	runs    map[uint64]*nodeRun
	next    uint64
	dead    error // why the supervisor is gone; nil while it serves
	stopped error // why drover gave up on it; nil unless it did
}

var (
	nodeMu  sync.Mutex
	theNode *node
)

// currentNode returns the running node supervisor, starting one when there
// is none or the last one died.
func currentNode(sup string) (*node, error) {
	nodeMu.Lock()
	defer nodeMu.Unlock()
	if n := theNode; n != nil {
		n.mu.Lock()
		dead := n.dead
		n.mu.Unlock()
		if dead == nil {
			return n, nil
		}
	}
	n, err := startNode(sup)
	if err != nil {
		return nil, err
	}
	theNode = n
	return n, nil
}

func startNode(sup string) (*node, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "drover")
	defer theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	cmd := &exec.Cmd{
		Path: sup,
		Args: []string{"drover", SuperviseArg},
		// Nothing of drover's: it needs none, and no run's tag. One entry
		// all the same: a scan for leftovers reads an empty environment
		// again, as a process caught mid-exec (see execWaits).
		Env:        []string{supervisorEnv},
		ExtraFiles: []*os.File{theirs},
		Stderr:     os.Stderr, // a crash of the supervisor is drover's to show
		// Its own group, out of reach of a terminal's ^C (drover stops
		// runs itself). No parent-death signal: drover's death is what it
		// watches for (end of file on the socket), to kill every tree first.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("start the supervisor: %w", err)
	}
	n := &node{conn: c.(*net.UnixConn), proc: cmd.Process, pid: cmd.Process.Pid, done: make(chan struct{}), runs: map[uint64]*nodeRun{}}
	go func() { _ = cmd.Wait(); n.ps = cmd.ProcessState; close(n.done) }()
	go n.read()
	return n, nil
}

// read routes the supervisor's messages to their runs until the socket
// ends, then fails every run still open.
func (n *node) read() {
	buf := make([]byte, 64<<10)
	for {
		k, _, _, _, err := n.conn.ReadMsgUnix(buf, nil)
		if err != nil || k == 0 {
			break
		}
		verb, id, rest := parseMsg(buf[:k])
		if verb == "started" || verb == "notfound" || verb == "failed" {
			n.answered.Store(time.Now().UnixNano())
		}
		n.mu.Lock()
		r := n.runs[id]
		n.mu.Unlock()
		if r != nil {
			r.deliver(verb, rest)
		}
	}
	// Dead at once, so the next run starts a new supervisor; the runs it
	// had are told why once its exit status is in.
	n.mu.Lock()
	n.dead = fmt.Errorf("the node supervisor (pid %d) is gone", n.pid)
	n.mu.Unlock()
	why := "its socket closed"
	select {
	case <-n.done:
		why = n.ps.String()
	case <-time.After(500 * time.Millisecond):
	}
	n.conn.Close()
	n.mu.Lock()
	if n.stopped != nil {
		n.dead = fmt.Errorf("%w; drover stopped it (%s)", n.stopped, why)
	} else {
		n.dead = fmt.Errorf("the node supervisor (pid %d) is gone: %s", n.pid, why)
	}
	runs := n.runs
	n.runs = map[uint64]*nodeRun{}
	n.mu.Unlock()
	for _, r := range runs {
		r.lose(n.dead)
	}
}

// abandon gives up on a supervisor that stopped answering: the next run
// starts a new one, this one is SIGKILLed (through its os.Process, safe
// from pid reuse) and its socket closed, so read ends every run it still
// has as when a supervisor dies, even if the kill cannot take effect yet (a
// process blocked in the kernel on a hung mount).
func (n *node) abandon(why error) {
	n.stop.Do(func() {
		n.mu.Lock()
		n.stopped = why
		if n.dead == nil {
			n.dead = why
		}
		n.mu.Unlock()
		if n.proc != nil {
			_ = n.proc.Kill()
		}
		n.conn.Close()
	})
}

// send writes one request, with fds, waiting at most sendBound for room in
// the socket (a stopped supervisor reads none).
func (n *node) send(verb string, id uint64, files ...*os.File) error {
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = syscall.UnixRights(fds...)
	}
	_ = n.conn.SetWriteDeadline(time.Now().Add(sendBound))
	_, _, err := n.conn.WriteMsgUnix([]byte(verb+" "+strconv.FormatUint(id, 10)), oob, nil)
	return err
}

// start asks the supervisor to start spec with the given stdio (stdin may
// be nil) and waits for its answer, at most startBound: then the
// supervisor is taken for stuck and abandoned (the run stays in n.runs, so
// an agent it started after all is killed with the rest). A program that
// cannot be executed is a *NotFoundError for as, as without a supervisor.
func (n *node) start(spec startSpec, as string, stdin, stdout, stderr *os.File) (*nodeRun, error) {
	n.mu.Lock()
	if n.dead != nil {
		n.mu.Unlock()
		return nil, n.dead
	}
	n.next++
	r := &nodeRun{n: n, id: n.next, grace: spec.Grace, first: make(chan string, 1), done: make(chan struct{})}
	r.tag, _ = lookupEnv(spec.Env, RunTagKey)
	n.runs[r.id] = r
	n.mu.Unlock()
	specR, specW, err := os.Pipe()
	if err != nil {
		n.forget(r.id)
		return nil, fmt.Errorf("supervisor pipe: %w", err)
	}
	files := []*os.File{specR}
	if spec.Stdin = stdin != nil; spec.Stdin {
		files = append(files, stdin)
	}
	files = append(files, stdout, stderr)
	err = n.send("start", r.id, files...)
	specR.Close()
	if err != nil {
		specW.Close()
		n.forget(r.id)
		return nil, fmt.Errorf("start %s: the supervisor did not take the run: %w", as, err)
	}
	go func() { _ = json.NewEncoder(specW).Encode(spec); specW.Close() }()
	// Stuck is no answer to any start for startBound: a burst of
	// thousands of starts on a loaded machine queues behind one another
	// (the supervisor forks them one at a time), and the last may wait
	// longer than startBound while every other one is answered.
	var answer string
	t := time.NewTimer(startBound)
	defer t.Stop()
	for answer == "" {
		select {
		case answer = <-r.first:
		case <-t.C:
			if since := time.Since(time.Unix(0, n.answered.Load())); since < startBound {
				t.Reset(startBound - since)
				continue
			}
			why := fmt.Errorf("the node supervisor (pid %d) answered no start within %s", n.pid, startBound)
			n.abandon(why)
			return nil, fmt.Errorf("start %s: %w; drover stopped it, the next run starts a new one", as, why)
		}
	}
	verb, rest, _ := cut(answer)
	switch verb {
	case "started": // r.pid is set
		return r, nil
	case "notfound":
		n.forget(r.id)
		return nil, &NotFoundError{Path: as, Err: errors.New(rest)}
	default:
		n.forget(r.id)
		return nil, fmt.Errorf("start %s: %s", as, rest)
	}
}

func (n *node) forget(id uint64) {
	n.mu.Lock()
	delete(n.runs, id)
	n.mu.Unlock()
}

// startSupervised starts path under the node supervisor, or returns false
// when none is in use.
func startSupervised(path string, s Spec, grace time.Duration, p *pipes) (runHandle, bool, error) {
	sup := supervisorPath()
	if sup == "" {
		return nil, false, nil
	}
	n, err := currentNode(sup)
	if err != nil {
		return nil, true, err
	}
	// Absolute, as resolve meant them (relative to drover's working
	// directory): the supervisor changes to Dir before it executes path.
	dir := s.Dir
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if abs, err := filepath.Abs(dir); err == nil && dir != "" {
		dir = abs
	}
	spec := startSpec{Path: path, Argv: append([]string{s.Path}, s.Args...), Env: append([]string{}, s.Env...), Dir: dir, Grace: grace}
	r, err := n.start(spec, s.Path, p.inR, p.outW, p.errW)
	if err != nil {
		return nil, true, err
	}
	return r, true, nil
}
