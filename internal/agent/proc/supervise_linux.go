//go:build linux

package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// SuperviseArg is the hidden first argument that makes the drover binary a
// run's supervisor (see Supervise). main handles it before anything else.
const SuperviseArg = "__supervise"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// supervisor is the program Run re-executes as each run's supervisor; ""
// runs agents directly (the default, e.g. in tests of other packages).
var supervisor atomic.Value // string

// UseSupervisor makes Run start every process under a supervisor: this very
// binary (/proc/self/exe, which survives an upgrade of the file on disk)
// re-executed with SuperviseArg. Only a binary whose main hands SuperviseArg
// to Supervise may call it.
func UseSupervisor() { supervisor.Store("/proc/self/exe") }

func supervisorPath() string {
	s, _ := supervisor.Load().(string)
	return s
}

// supervisedCmd returns the program and arguments that run path (resolved)
// with args under the supervisor, and false when no supervisor is in use.
func supervisedCmd(path, argv0 string, args []string, grace time.Duration) (string, []string, bool) {
	sup := supervisorPath()
	if sup == "" {
		return "", nil, false
	}
	return sup, append([]string{"drover", SuperviseArg, grace.String(), path, argv0}, args...), true
}

// Supervise is the supervisor's main; args are what followed SuperviseArg:
// the grace, the program's resolved path, its argv[0] and its arguments. It
// returns the supervisor's exit code.
//
// The supervisor is the leader of the run's process group and a child
// subreaper, so every descendant of the agent that is orphaned (a double
// fork, a daemon, a child in a session of its own) re-parents to it: the
// run's whole tree is always the supervisor's descendants, whatever their
// environment or process group. It reads fd 3, the lifeline, whose other end
// only drover holds: end of file means drover is gone (or wants the run dead
// now), and the supervisor SIGKILLs the whole tree and exits. A SIGTERM is
// forwarded to the tree. When the agent exits, what it left running gets
// SIGTERM, the grace, then SIGKILL; then the agent's status is written to
// fd 4 ("exit N" or "signal N", after "note …" lines) and the supervisor
// exits.
func Supervise(args []string) int {
	life, status := os.NewFile(3, "lifeline"), os.NewFile(4, "status")
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	report := func(format string, a ...any) { fmt.Fprintf(status, format+"\n", a...) }
	if len(args) < 3 {
		report("note the supervisor was started without a program")
		return 2
	}
	grace, err := time.ParseDuration(args[0])
	if err != nil {
		grace = DefaultGrace
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		report("note the supervisor could not become a subreaper (%v): orphans of the agent are not contained", e)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)

	// The reaper owns the thread that forked the agent (its parent-death
	// signal follows that thread) and reaps every child, re-parented
	// orphans included, so none stays a zombie.
	agentDone := make(chan syscall.WaitStatus, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		p, err := os.StartProcess(args[1], args[2:], &os.ProcAttr{
			Env:   os.Environ(),
			Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
			Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
		})
		started <- err
		if err != nil {
			return
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil { // ECHILD: nothing left to reap, for now
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if pid == p.Pid {
				agentDone <- ws
			}
		}
	}()
	if err := <-started; err != nil {
		verb := "failed"
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
			verb = "notfound"
		}
		report("%s %v", verb, err)
		return 127
	}
	report("started")
	// The agent holds the stdio pipes now; the supervisor lets go of them
	// so drover sees end of file when the tree is gone.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	lifelineGone := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(life).ReadByte() // only EOF or an error ends it
		close(lifelineGone)
	}()

	self := os.Getpid()
	for {
		select {
		case <-term:
			signalTree(self, syscall.SIGTERM, true)
		case <-lifelineGone:
			killTree(self)
			select {
			case ws := <-agentDone:
				reportStatus(report, ws)
			case <-time.After(time.Second):
			}
			return 137
		case ws := <-agentDone:
			if n := len(liveDescendants(self)); n > 0 {
				report("note the agent exited but left %d processes running; sending SIGTERM to them", n)
				signalTree(self, syscall.SIGTERM, false)
				deadline := time.After(grace)
			wait:
				for len(liveDescendants(self)) > 0 {
					select {
					case <-deadline:
						report("note processes left after a grace of %s; sending SIGKILL", grace)
						break wait
					case <-lifelineGone:
						break wait
					case <-time.After(25 * time.Millisecond):
					}
				}
				killTree(self)
			}
			reportStatus(report, ws)
			return 0
		}
	}
}

// reportStatus writes the agent's wait status as the supervisor's last line.
func reportStatus(report func(string, ...any), ws syscall.WaitStatus) {
	if ws.Signaled() {
		report("signal %d", int(ws.Signal()))
	} else {
		report("exit %d", ws.ExitStatus())
	}
}

// signalTree sends sig to every live descendant of root; with outsideOnly,
// only to those outside root's process group (the group got it already).
func signalTree(root int, sig syscall.Signal, outsideOnly bool) {
	for _, p := range liveDescendants(root) {
		if outsideOnly && p.pgrp == root {
			continue
		}
		_ = syscall.Kill(p.pid, sig)
	}
}

// killTree SIGKILLs root's descendants until none is left alive (a process
// forking while it is killed is caught on the next pass), for at most 5s.
func killTree(root int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		ds := liveDescendants(root)
		if len(ds) == 0 {
			return
		}
		for _, p := range ds {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procInfo is one process as /proc shows it.
type procInfo struct {
	pid, ppid, pgrp int
	state           byte
}

// liveDescendants lists the processes below root in the parent tree that
// are neither zombies nor dead.
func liveDescendants(root int) []procInfo {
	byParent := map[int][]procInfo{}
	for _, p := range allProcs() {
		byParent[p.ppid] = append(byParent[p.ppid], p)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range byParent[parent] {
			queue = append(queue, c.pid)
			if c.state != 'Z' && c.state != 'X' {
				out = append(out, c)
			}
		}
	}
	return out
}

// allProcs reads every process's parent, group and state from /proc.
func allProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …"; comm may contain spaces and parens.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgrp, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, procInfo{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]})
	}
	return out
}

// supervision is drover's end of one supervisor: the lifeline's write end
// (closing it makes the supervisor kill the run's tree) and what the
// supervisor reported.
type supervision struct {
	lifeW, statusR *os.File
	childEnds      []*os.File // closed in drover once the supervisor started
	report         chan supervisorReport
}

// supervisorReport is what the supervisor wrote on fd 4.
type supervisorReport struct {
	notes    []string
	exited   bool // the agent's status is known
	code     int
	signaled bool
	signal   syscall.Signal
}

// supervise rewrites cmd to run under the supervisor, or returns nil when
// none is in use.
func supervise(cmd *exec.Cmd, grace time.Duration) (*supervision, error) {
	sup, args, ok := supervisedCmd(cmd.Path, cmd.Args[0], cmd.Args[1:], grace)
	if !ok {
		return nil, nil
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, err
	}
	cmd.Path, cmd.Args = sup, args
	cmd.ExtraFiles = []*os.File{lifeR, statusW}
	// No parent-death signal for the supervisor: drover's death is what it
	// watches for (the lifeline's end of file), to kill the tree first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &supervision{lifeW: lifeW, statusR: statusR, childEnds: []*os.File{lifeR, statusW}, report: make(chan supervisorReport, 1)}, nil
}

// started closes drover's copies of the supervisor's ends and waits for
// the supervisor to say it started the agent. A program that cannot be
// executed is a *NotFoundError for path, as without a supervisor. The
// rest of the report is read in the background.
func (sv *supervision) started(path string) error {
	for _, f := range sv.childEnds {
		f.Close()
	}
	sc := bufio.NewScanner(sv.statusR)
	first := "failed the supervisor ended without a word"
	if sc.Scan() {
		first = sc.Text()
	}
	if verb, rest, _ := strings.Cut(first, " "); verb != "started" {
		sv.statusR.Close()
		if verb == "notfound" {
			return &NotFoundError{Path: path, Err: errors.New(rest)}
		}
		return fmt.Errorf("start %s: %s", path, rest)
	}
	go func() {
		var r supervisorReport
		for sc.Scan() {
			verb, rest, _ := strings.Cut(sc.Text(), " ")
			n, _ := strconv.Atoi(rest)
			switch verb {
			case "note":
				r.notes = append(r.notes, rest)
			case "exit":
				r.exited, r.code = true, n
			case "signal":
				r.exited, r.signaled, r.signal = true, true, syscall.Signal(n)
			}
		}
		sv.statusR.Close()
		sv.report <- r
	}()
	return nil
}

// failed closes everything after the supervisor could not be started.
func (sv *supervision) failed() {
	for _, f := range append(sv.childEnds, sv.lifeW, sv.statusR) {
		f.Close()
	}
}
