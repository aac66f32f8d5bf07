package testsummary

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goParent is the pid of the go command running this test binary, 0 when
// the parent is something else (the binary run by hand, go test -exec).
func goParent() int {
	ppid := os.Getppid()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(ppid) + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return 0
	}
	return ppid
}

// goStderr is where the summary goes: the go command's stderr when it can
// be written safely (a terminal, a pipe, or a file opened for appending:
// writing at our own offset into a file the go command writes at its own
// would overwrite its lines), else the terminal; this binary's own stderr
// when its parent is not the go command (run by hand, its output shows).
// Without /proc (macOS) the parent cannot be told apart: the terminal.
func goStderr() (io.Writer, func()) {
	if pid := goParent(); pid != 0 {
		if f := openFD2(pid); f != nil {
			return f, func() { f.Close() }
		}
	} else if haveProc() {
		return os.Stderr, func() {}
	}
	if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		return f, func() { f.Close() }
	}
	return os.Stderr, func() {}
}

// haveProc reports whether this system has Linux's /proc.
func haveProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// openFD2 opens pid's file descriptor 2 for writing, or returns nil.
func openFD2(pid int) *os.File {
	dir := "/proc/" + strconv.Itoa(pid)
	info, err := os.Stat(dir + "/fd/2")
	if err != nil {
		return nil
	}
	if info.Mode().IsRegular() && !appending(dir+"/fdinfo/2") {
		return nil
	}
	f, err := os.OpenFile(dir+"/fd/2", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	return f
}

// appending reports whether the fdinfo file says O_APPEND (octal 02000).
func appending(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&0o2000 != 0
		}
	}
	return false
}

// waitForSiblings waits until the go command's other children (the test
// binaries of the other packages) have exited, or until the deadline.
func waitForSiblings(deadline time.Time) {
	pid := goParent()
	if pid == 0 {
		return
	}
	for siblings(pid) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	// The go command prints a package's "ok" line once its binary exits.
	time.Sleep(200 * time.Millisecond)
}

// siblings counts the processes other than this one whose parent is ppid
// and that the go command runs for a test: a test binary (pkg.test) or one
// of its toolchain's tools (compile, link, vet, …). Other children of the
// go command can live as long as it does (a GOCACHEPROG cache program):
// waiting for those held the summary to its deadline, 9 minutes under go
// test's default timeout.
func siblings(ppid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	self, tools := os.Getpid(), toolDir(ppid)
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(b)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(ppid) && forTests(id, tools) {
			n++
		}
	}
	return n
}

// toolDir is where the tools of the go command pid's toolchain live
// (GOROOT/pkg/tool, GOROOT being two levels above bin/go; a directory per
// GOOS_GOARCH below it).
func toolDir(pid int) string {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Dir(exe)), "pkg", "tool")
}

// forTests reports whether process pid runs a test binary or a tool of
// tools (the directory); an exited one (its exe unreadable) is not waited for.
func forTests(pid int, tools string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false
	}
	return strings.HasSuffix(filepath.Base(exe), ".test") || tools != "" && filepath.Dir(filepath.Dir(exe)) == tools
}
