package sqlstore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// The restore lock keeps drover restore and every other drover process of
// a SQLite store apart: each process that opens the store holds a shared
// flock(2) on PATH.lock for as long as it has the store open, and restore
// holds an exclusive one for its whole run. So a restore refuses while any
// drover process has the store open (a serve that has started since its
// check for live serves included), and a serve (or any command) that starts
// during a restore refuses to open the store, instead of writing to the
// file the restore is about to unlink. The lock file is never replaced or
// removed, so both always lock the same inode. A directory drover may not
// write (a read-only store) goes without the lock: nothing can be restored
// there either.

// ErrRestoring: drover restore is replacing the store; it cannot be opened
// until the restore is done.
var ErrRestoring = errors.New("drover restore is replacing this store")

// errInUse: restore found the store open in another drover process.
var errInUse = errors.New("the store is open in another drover process")

// lockPath is the restore lock of the SQLite store at path.
func lockPath(path string) string { return path + ".lock" }

// lockable reports whether path is a file store that can have a lock.
func lockable(path string) bool {
	return path != "" && !strings.Contains(path, ":memory:") && !strings.HasPrefix(path, "file:")
}

// shareLock takes the shared restore lock of the store at path (nil, nil
// when the lock file cannot be made). ErrRestoring when a restore holds it.
func shareLock(path string) (*os.File, error) {
	return takeLock(path, syscall.LOCK_SH, ErrRestoring)
}

// exclusiveLock takes the restore lock of the store at path for a restore.
func exclusiveLock(path string) (*os.File, error) {
	return takeLock(path, syscall.LOCK_EX, errInUse)
}

func takeLock(path string, how int, held error) (*os.File, error) {
	if !lockable(path) {
		return nil, nil
	}
	f, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if f, err = os.Open(lockPath(path)); err != nil {
			return nil, nil // a directory drover may not write: no lock to take
		}
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, fmt.Errorf("%w (it holds %s)", held, lockPath(path))
	}
	f.Close()
	return nil, fmt.Errorf("locking %s: %w", lockPath(path), err)
}
