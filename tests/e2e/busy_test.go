package e2e_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test holds the store's write lock itself

	"github.com/drover-dev/drover/internal/testkit"
)

// serve started while another process holds the SQLite store's write lock
// longer than SQLite's busy timeout waits, says so, and starts once the lock
// is released, then runs the card waiting for it (issue 13, item 12: it gave
// up with "database is locked (SQLITE_BUSY)").
func TestServeWaitsOutABusyStore(t *testing.T) {
	e := newEnv(t, wf{}, `log_end; exit 0`, testkit.SQLite)
	c := e.addCard("waits for the lock") // creates the store
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, ".drover", "drover.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
		}
	}()

	e.start()
	serveLog := func() string { b, _ := os.ReadFile(e.serve.log); return string(b) }
	// SQLite's own busy timeout is 10s; the wait is logged after it.
	eventually(t, 60*time.Second, "serve logs that it waits for the busy store", func() bool {
		select {
		case <-e.serve.done:
			return true // checked below
		default:
		}
		return strings.Contains(serveLog(), "store busy")
	})
	select {
	case <-e.serve.done:
		t.Fatalf("serve exited while the store was busy: %v\n%s", e.serve.err, serveLog())
	default:
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	locked = false
	eventually(t, 60*time.Second, c.Identifier+" starts once the lock is released", func() bool { return len(e.starts()) == 1 })
	select {
	case <-e.serve.done:
		t.Fatalf("serve exited: %v\n%s", e.serve.err, serveLog())
	default:
	}
}
