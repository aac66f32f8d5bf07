// Package chaos_test runs the real drover binary under faults: several
// `drover serve` processes on one PostgreSQL (or one on SQLite) are killed
// with SIGKILL and restarted while command agents run, and the store and the
// agents' own side-channel record are then checked against drover's
// invariants (see docs/reliability.md).
package chaos_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
)

var longFlag = flag.Bool("chaos.long", false, "run the long chaos variant (>= 2 minutes, >= 20 kills, >= 200 cards); env DROVER_CHAOS_LONG=1 does the same")

// droverBin is the binary under test, built once by TestMain.
var droverBin string

func long() bool { return *longFlag || os.Getenv("DROVER_CHAOS_LONG") == "1" }

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "drover-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	droverBin = filepath.Join(dir, "drover")
	cmd := exec.Command("go", "build", "-o", droverBin, "github.com/drover-dev/drover/cmd/drover")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: building drover:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testPG is a fresh PostgreSQL schema for t (skips without DROVER_TEST_POSTGRES_URL).
func testPG(t *testing.T) string { return pgtest.DSN(t) }
