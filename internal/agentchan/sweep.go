package agentchan

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// sweep removes what a drover serve that died left under dir: the run
// directories whose socket nobody listens on. A live socket (another
// process on the same board directory) is left alone, and so is a
// directory made in the last minute: another process may be between
// making it and listening in it.
func sweep(dir string, now time.Time) {
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*"))
	for _, d := range runs {
		if fi, err := os.Stat(d); err != nil || now.Sub(fi.ModTime()) < time.Minute {
			continue
		}
		if dead(filepath.Join(d, "s")) {
			os.RemoveAll(d)
		}
	}
}

// dead says no process listens on the socket at path (or there is none).
func dead(path string) bool {
	conn, err := net.Dial("unix", path)
	if err == nil {
		conn.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist)
}
