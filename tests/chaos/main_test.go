// Package chaos_test runs the real drover binary under faults: several
// `drover serve` processes on one PostgreSQL (or one on SQLite) are killed
// with SIGKILL and restarted while command agents run, and the store and the
// agents' own side-channel record are then checked against drover's
// invariants (see docs/reliability.md).
package chaos_test

import (
	"flag"
	"os"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
)

var longFlag = flag.Bool("chaos.long", false, "run the long chaos variant (>= 2 minutes, >= 20 kills, >= 200 cards); env DROVER_CHAOS_LONG=1 does the same")

func long() bool { return *longFlag || os.Getenv("DROVER_CHAOS_LONG") == "1" }

func TestMain(m *testing.M) { testkit.Main(m) }
