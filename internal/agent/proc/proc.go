// Package proc runs one agent subprocess: in its own process group, with an
// explicit environment, a capped log, kept output tails, a wall-clock timeout
// and a stall timeout, and a TERM-then-KILL stop of the whole process tree.
// On Linux each process runs under the node supervisor, which contains its
// whole tree (see Supervise). It is Unix only.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drover-dev/drover/internal/agent/sandbox"
)

const (
	// DefaultGrace is how long a stopped process group has between SIGTERM
	// and SIGKILL.
	DefaultGrace = 5 * time.Second
	// DefaultMaxLogBytes caps a run's log when Spec.MaxLogBytes is 0.
	DefaultMaxLogBytes int64 = 64 << 20
	// pipeDrain is how long Run keeps reading after the process group is
	// gone, for output still buffered or held by processes that left it.
	pipeDrain = 2 * time.Second
)

// Spec describes one process to run.
type Spec struct {
	Path string   // program: a bare name is searched in Env's PATH
	Args []string // arguments, without argv[0]
	Dir  string   // working directory ("" = drover's)
	// Env is the child's complete environment. Nothing is inherited from
	// drover's own environment except what the caller puts here (see BaseEnv).
	Env   []string
	Stdin []byte // written to the child's stdin, then closed; nil = /dev/null
	// StdinPipe, when set, makes stdin a pipe whose write end is handed to
	// it once the program has started (before any output callback): the
	// caller writes to it as the conversation goes (a JSON-RPC client) and
	// closes it when done. Stdin is ignored then. Run closes the pipe when
	// it returns, so a late write fails instead of blocking.
	StdinPipe func(w io.WriteCloser)
	// LogPath receives stdout and stderr (created with its directory,
	// appended to). Stdout lines are written as they are, stderr lines with
	// StderrPrefix, drover's own lines with NotePrefix. Log is used instead
	// when LogPath is empty; with neither, output is only kept in the tails.
	LogPath string
	Log     io.Writer
	// Header, when set, is written to the log as a note before the
	// program starts (the command line drover runs).
	Header string
	// MaxLogBytes caps the agent output written to the log (0 = the
	// default, < 0 = unlimited). Beyond it the pipes are still drained.
	MaxLogBytes  int64
	Timeout      time.Duration // total wall-clock cap (0 = none)
	StallTimeout time.Duration // stop after this long with no output (0 = none)
	Grace        time.Duration // SIGTERM→SIGKILL delay (0 = DefaultGrace)
	// Callbacks are never called concurrently with each other and must be
	// quick: they run on the goroutines draining the pipes.
	OnStdoutLine func(line []byte) // each stdout line, without "\n"; the slice may be kept
	OnOutput     func()            // after any output on stdout or stderr
	OnStart      func(pid int)     // once started; pid is also the process group id
	// Sandbox, when set, runs the program inside bwrap (see package
	// sandbox) with Dir as its workspace, a fresh home at Env's HOME, and
	// Binds. Without bwrap the program does not start (a *NotFoundError):
	// never unsandboxed.
	Sandbox *sandbox.Config
	Binds   []sandbox.Bind
	// SandboxHome, when set, is the host directory the sandbox shows at
	// HOME (the card's own); "" = a fresh one per run.
	SandboxHome string
}

// Exit is what happened to the process.
type Exit struct {
	Code     int  // exit status; -1 when killed by a signal or never started
	Signaled bool // the process died of a signal
	// KilledFor is why drover stopped it: "" (it ended on its own),
	// "timeout", "stall", or the context's cause (see Cause; "cancel" when
	// the cause names no reason).
	KilledFor    string
	StdoutTail   string // last TailBytes of stdout
	StderrTail   string // last TailBytes of stderr
	Duration     time.Duration
	LogTruncated bool // the log hit MaxLogBytes
}

// Run starts s and waits until the process has exited, its process group is
// gone and its output is drained. The error is only for failing to start
// (a *NotFoundError for a missing program, else a wrapped error); every way
// the process itself ends is described by Exit. If ctx is already done the
// process is not started and Exit.KilledFor says why.
//
// Stopping (timeout, stall, ctx done) sends SIGTERM to the whole process
// group and SIGKILL after Grace. When the process exits on its own, anything
// it left running in its group gets the same treatment, so no descendant that
// stayed in the group outlives Run. Run can therefore take up to
// Timeout + Grace + a short pipe drain.
func Run(ctx context.Context, s Spec) (Exit, error) {
	start := time.Now()
	if ctx.Err() != nil {
		return Exit{Code: -1, KilledFor: causeReason(ctx)}, nil
	}
	path, err := resolve(s.Path, s.Dir, s.Env)
	if err != nil {
		return Exit{Code: -1}, err
	}
	if s.Sandbox != nil {
		if path, s, err = sandboxed(path, s); err != nil {
			return Exit{Code: -1}, err
		}
	}
	if s.Dir != "" {
		if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
			return Exit{Code: -1}, fmt.Errorf("working directory %q is not a usable directory: %v", s.Dir, err)
		}
	}
	logw, closeLog, err := openLog(s)
	if err != nil {
		return Exit{Code: -1}, err
	}
	defer closeLog()
	max := s.MaxLogBytes
	if max == 0 {
		max = DefaultMaxLogBytes
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	sink := newLogSink(logw, max)
	if s.Header != "" {
		sink.note(s.Header)
	}

	p, err := openPipes(s.Stdin != nil || s.StdinPipe != nil)
	if err != nil {
		return Exit{Code: -1}, err
	}
	defer p.closeParent()
	h, err := startProgram(path, s, grace, p)
	if err != nil {
		p.closeChild()
		return Exit{Code: -1}, err
	}
	p.closeChild()
	pgid := h.procID()

	if s.OnStart != nil { // before the readers start: callbacks never overlap
		s.OnStart(pgid)
	}
	if s.StdinPipe != nil {
		s.StdinPipe(p.inW)
	}
	var cbMu sync.Mutex
	var lastOut atomic.Int64
	lastOut.Store(time.Now().UnixNano())
	activity := func() {
		lastOut.Store(time.Now().UnixNano())
		if s.OnOutput != nil {
			cbMu.Lock()
			s.OnOutput()
			cbMu.Unlock()
		}
	}
	var onLine func([]byte)
	if s.OnStdoutLine != nil {
		onLine = func(b []byte) { cbMu.Lock(); s.OnStdoutLine(b); cbMu.Unlock() }
	}
	out := &stream{sink: sink, activity: activity, onLine: onLine}
	errs := &stream{prefix: StderrPrefix, sink: sink, activity: activity}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); out.run(p.outR) }()
	go func() { defer readers.Done(); errs.run(p.errR) }()
	if p.inW != nil && s.StdinPipe == nil {
		go func() { p.inW.Write(s.Stdin); p.inW.Close() }()
	}

	st := &stopper{h: h, pgid: pgid, grace: grace, sink: sink}
	var timeoutC, stallC <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var stallT *time.Timer
	if s.StallTimeout > 0 {
		stallT = time.NewTimer(s.StallTimeout)
		defer stallT.Stop()
		stallC = stallT.C
	}
	done := ctx.Done()
loop:
	for {
		select {
		case <-h.ended():
			break loop
		case <-timeoutC:
			timeoutC = nil
			st.stop("timeout", fmt.Sprintf("timeout: still running after %s", s.Timeout))
		case <-stallC:
			idle := time.Since(time.Unix(0, lastOut.Load()))
			if idle < s.StallTimeout {
				stallT.Reset(s.StallTimeout - idle)
				continue
			}
			stallC = nil
			st.stop("stall", fmt.Sprintf("stall: no output for %s", s.StallTimeout))
		case <-done:
			done = nil
			why := causeReason(ctx)
			st.stop(why, "stopped: "+why)
		case <-st.killC():
			st.kill("grace of " + grace.String() + " elapsed")
		}
	}
	rs := h.status()
	if !rs.contained {
		st.sweep()
	} else {
		st.done()
	}

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(pipeDrain):
		sink.note("output pipes are still held open by a process outside the agent's process group; stopped reading them")
		p.closeParent() // unblocks the readers
		<-drained
	}

	ex := Exit{Code: -1, KilledFor: st.reason, StdoutTail: out.tail.String(), StderrTail: errs.tail.String(), Duration: time.Since(start)}
	for _, n := range rs.notes {
		sink.note(n)
	}
	known, code, sig := rs.known, rs.code, rs.sig
	if known {
		ex.Code = code
		if sig != 0 {
			ex.Signaled = true
			ex.Code = -1
			sink.note(fmt.Sprintf("killed by signal %v after %s", sig, ex.Duration.Round(time.Millisecond)))
		} else {
			sink.note(fmt.Sprintf("exit code %d after %s", ex.Code, ex.Duration.Round(time.Millisecond)))
		}
	}
	sink.mu.Lock()
	ex.LogTruncated = sink.truncated
	if sink.dropped > 0 {
		sink.noteLocked(fmt.Sprintf("%d further bytes of output were not logged", sink.dropped))
	}
	sink.mu.Unlock()
	return ex, nil
}

// startProgram starts the program: under the node supervisor when one is in use,
// else directly. A program that cannot be executed is a *NotFoundError.
func startProgram(path string, s Spec, grace time.Duration, p *pipes) (runHandle, error) {
	if h, ok, err := startSupervised(path, s, grace, p); ok {
		return h, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{s.Path}, s.Args...),
		Dir:         s.Dir,
		Env:         append([]string{}, s.Env...), // never nil: nil would inherit os.Environ()
		Stdout:      p.outW,
		Stderr:      p.errW,
		SysProcAttr: sysProcAttr(),
	}
	if p.inR != nil {
		cmd.Stdin = p.inR
	}
	h, err := startDirect(cmd)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
			return nil, &NotFoundError{Path: s.Path, Err: err}
		}
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	return h, nil
}

// openLog opens the destination for output; the returned func closes it.
func openLog(s Spec) (io.Writer, func(), error) {
	if s.LogPath == "" {
		return s.Log, func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(s.LogPath), 0o750); err != nil {
		return nil, nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// sandboxed is s run by bwrap: bwrap's resolved path, and s with bwrap's
// arguments around the program's (resolved to path).
func sandboxed(path string, s Spec) (string, Spec, error) {
	bw, err := resolve(sandbox.Program(), "", nil)
	if err != nil {
		return "", s, err
	}
	home, _ := lookupEnv(s.Env, "HOME")
	r := sandbox.Run{Workspace: s.Dir, Home: home, HomeDir: s.SandboxHome, Program: path, Binds: s.Binds}
	s.Args = s.Sandbox.Args(r, append([]string{path}, s.Args...))
	s.Path = sandbox.Program()
	return bw, s, nil
}
