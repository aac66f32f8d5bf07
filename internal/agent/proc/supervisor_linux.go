//go:build linux

package proc

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// SuperviseArg is the hidden first argument that makes the drover binary
// the node supervisor (see Supervise). main handles it before anything else.
const SuperviseArg = "__supervise"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// startSpec is what drover sends the supervisor to start one run (as JSON,
// through a pipe handed over with the run's stdio: argv and env may be
// larger than one socket message).
type startSpec struct {
	Path  string        `json:"path"` // resolved
	Argv  []string      `json:"argv"`
	Env   []string      `json:"env"`
	Dir   string        `json:"dir"`
	Grace time.Duration `json:"grace"`
	Stdin bool          `json:"stdin"` // a stdin fd follows the spec's
}

// Supervise is the node supervisor's main (args are what followed
// SuperviseArg: none); it returns the exit code.
//
// One supervisor serves every run of one drover process. It is a child
// subreaper, so every descendant of an agent that is orphaned (a double
// fork, a daemon, a child in a session of its own) re-parents to it: every
// run's whole tree is always below it. Fd 3 is a unix seqpacket socket to
// drover. Drover asks it to start a run (argv, env, dir, grace and the
// agent's stdio fds); the supervisor starts the agent as its child in a new
// session (so process group = session = the agent's pid) with a
// parent-death signal, answers "started <pid>", "notfound …" or "failed …",
// and later "note …" lines and the agent's status ("exit N" or "signal N")
// once what the agent left running is gone: SIGTERM, the grace, then
// SIGKILL. Drover may ask to "term" or "kill" a run's tree. End of file on
// the socket (drover is gone, even SIGKILLed) makes it SIGKILL every run's
// tree and exit. Starting, reaping and finishing runs is in reaper_linux.go,
// which run a process belongs to in attribute_linux.go.
func Supervise(args []string) int {
	f := os.NewFile(3, "drover")
	c, err := net.FileConn(f)
	f.Close()
	uc, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "drover supervisor: fd 3 is not drover's socket: %v\n", err)
		return 2
	}
	s := &super{
		conn:   uc,
		self:   os.Getpid(),
		runs:   map[uint64]*srun{},
		byPid:  map[int]*srun{},
		owner:  map[procKey]uint64{},
		starts: make(chan *srun),
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		s.warn = fmt.Sprintf("the supervisor could not become a subreaper (%v): orphans of the agent are not contained", e)
	}
	if s.null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
		fmt.Fprintf(os.Stderr, "drover supervisor: %v\n", err)
		return 2
	}
	// Terminal signals are drover's to handle; a SIGTERM (a service
	// manager stopping everything) is passed on to every run's tree.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	gone := make(chan struct{})
	go s.reaper()
	go func() { s.serve(); close(gone) }()
	for {
		select {
		case <-term:
			s.mu.Lock()
			ids := make([]uint64, 0, len(s.runs))
			for id := range s.runs {
				ids = append(ids, id)
			}
			s.mu.Unlock()
			for _, id := range ids {
				s.term(id)
			}
		case <-gone:
			killBelow(s.self)
			return 0
		}
	}
}

// super is the node supervisor's state.
type super struct {
	conn *net.UnixConn
	self int
	warn string   // said to every run when containment is weaker
	null *os.File // stdin for agents without one

	mu     sync.Mutex
	runs   map[uint64]*srun   // every run not yet reported
	byPid  map[int]*srun      // runs whose agent is not reaped yet
	owner  map[procKey]uint64 // processes already attributed to a run
	starts chan *srun         // to the reaper thread
	snaps  snapShare          // /proc snapshots, shared by runs that ask at once
	// forks is held for writing from an agent's fork to its run's
	// registration, and for reading by runProcs from its snapshot to its
	// attribution, so no snapshot shows an agent its run does not own yet.
	forks sync.RWMutex
}

// srun is one run as the supervisor knows it.
type srun struct {
	id    uint64
	spec  startSpec
	files []*os.File // stdin (or nil), stdout, stderr until started
	tag   string     // RunTagKey=value from its env, "" when absent
	pid   int        // the agent: leader of the run's session and group
	start uint64     // the agent's start time (clock ticks after boot)

	exited   bool // the agent was reaped (guarded by super.mu)
	killNow  chan struct{}
	killOnce sync.Once
}

// send writes one message ("verb id rest") to drover; a lost drover is
// noticed by serve.
func (s *super) send(id uint64, verb, rest string) {
	msg := verb + " " + strconv.FormatUint(id, 10)
	if rest != "" {
		msg += " " + rest
	}
	_, _, _ = s.conn.WriteMsgUnix([]byte(msg), nil, nil)
}

func (s *super) note(r *srun, format string, a ...any) {
	s.send(r.id, "note", fmt.Sprintf(format, a...))
}

// serve reads drover's requests until the socket ends.
func (s *super) serve() {
	buf := make([]byte, 512)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		files := receivedFiles(oob[:oobn])
		verb, id, _ := parseMsg(buf[:n])
		switch verb {
		case "start":
			go s.prepare(id, files)
			continue
		case "term":
			go s.term(id)
		case "kill":
			go s.kill(id)
		}
		for _, f := range files {
			f.Close()
		}
	}
}

// receivedFiles turns the fds of an SCM_RIGHTS message into files.
func receivedFiles(oob []byte) []*os.File {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			out = append(out, os.NewFile(uintptr(fd), "fd"))
		}
	}
	return out
}

// parseMsg splits "verb id rest".
func parseMsg(b []byte) (verb string, id uint64, rest string) {
	s := string(b)
	verb, s, _ = cut(s)
	ids, rest, _ := cut(s)
	id, _ = strconv.ParseUint(ids, 10, 64)
	return verb, id, rest
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// prepare reads a run's spec from the first fd and hands the run to the
// reaper thread to start.
func (s *super) prepare(id uint64, files []*os.File) {
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(files) < 3 {
		closeAll()
		s.send(id, "failed", "the supervisor received no stdio for the run")
		return
	}
	r := &srun{id: id, killNow: make(chan struct{})}
	b, err := io.ReadAll(files[0])
	files[0].Close()
	if err == nil {
		err = json.Unmarshal(b, &r.spec)
	}
	rest := files[1:]
	if err == nil && len(rest) != map[bool]int{true: 3, false: 2}[r.spec.Stdin] {
		err = fmt.Errorf("%d stdio fds for stdin=%v", len(rest), r.spec.Stdin)
	}
	if err != nil {
		files = rest
		closeAll()
		s.send(id, "failed", "the supervisor could not read the run's spec: "+err.Error())
		return
	}
	if !r.spec.Stdin {
		rest = append([]*os.File{nil}, rest...)
	}
	r.files = rest
	if v, ok := lookupEnv(r.spec.Env, RunTagKey); ok && v != "" {
		r.tag = RunTagKey + "=" + v
	}
	s.starts <- r
}
