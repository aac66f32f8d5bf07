package agentchan

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// sweep removes what a drover serve that died left under dir: the run
// directories whose socket nobody listens on. A live socket (another
// process on the same board directory) is left alone.
func sweep(dir string) {
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*"))
	for _, d := range runs {
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
