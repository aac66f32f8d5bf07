// Package gate holds the conditions that switch whole suites of drover's
// tests off where the machine lacks what they need (a PostgreSQL server,
// chromium, the agent CLIs, …). A gated test calls Require, which skips it
// with the gate's message; the summary package (testsummary, the last
// package of `go test ./...`) evaluates the same gates and prints the ones
// that are off, so a plain `go test ./...` says what it did not run and how
// to turn it on. A new environment-gated suite belongs here, not in a
// t.Skip of its own.
//
// Only tests import it (it has no dependencies beyond the standard library,
// so every test package, pgtest included, can).
package gate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Gate is one suite's switch.
type Gate struct {
	Suite string        // what does not run: "PostgreSQL cases"
	Where string        // the packages it is in
	Off   func() string // why it is off here and how to turn it on; "" when on
	// Files: Off looks at files outside the module (a program installed or
	// not), which go test's cache does not recheck; a skip then keeps the
	// package's result out of the cache (see Uncached).
	Files bool
}

// Require skips t when g is off, with the suite and how to turn it on.
func (g Gate) Require(t testing.TB) {
	t.Helper()
	if why := g.Off(); why != "" {
		if g.Files {
			Uncached(t)
		}
		t.Skipf("%s skipped: %s", g.Suite, why)
	}
}

// PostgresEnv points the PostgreSQL cases at a server.
const PostgresEnv = "DROVER_TEST_POSTGRES_URL"

// ChromiumPath is the browser the dashboard's browser tests drive.
const ChromiumPath = "/usr/bin/chromium"

var (
	// Postgres: every store test and end-to-end test runs on SQLite, and on
	// PostgreSQL too when the variable names a server.
	Postgres = Gate{Suite: "PostgreSQL cases", Where: "the store, dispatch and end-to-end packages",
		Off: func() string {
			if os.Getenv(PostgresEnv) == "" {
				return "set " + PostgresEnv + " (e.g. postgres://postgres@127.0.0.1:5432/test) to run them"
			}
			return ""
		}}
	// Chromium: the dashboard's browser tests.
	Chromium = Gate{Suite: "browser tests", Where: "internal/server", Files: true,
		Off: func() string {
			if _, err := os.Stat(ChromiumPath); err != nil {
				return ChromiumPath + " not found (apt-get install -y chromium)"
			}
			return ""
		}}
	// RealCLIs: the agent CLIs themselves (Claude Code, Codex, …).
	RealCLIs = Gate{Suite: "real-CLI tests", Where: "tests/realcli",
		Off: func() string {
			if os.Getenv("DROVER_AGENT_CLIS") == "" {
				return "install the CLIs and set DROVER_AGENT_CLIS: export DROVER_AGENT_CLIS=\"$(.ci/agent-clis)\""
			}
			return ""
		}}
	// PGRestart: the chaos test that stops and starts a PostgreSQL server
	// of its own (initdb in a temp dir, its own port).
	PGRestart = Gate{Suite: "PostgreSQL restart chaos", Where: "tests/chaos", Files: true,
		Off: func() string {
			if os.Getenv("DROVER_TEST_PG_RESTART") != "1" {
				return "set DROVER_TEST_PG_RESTART=1 (it restarts a PostgreSQL server of its own; needs PostgreSQL's pg_ctl)"
			}
			if PGCtl() == "" {
				return "no pg_ctl on this machine (install PostgreSQL's server, Debian package postgresql)"
			}
			return ""
		}}
	// Release: the test that installs a snapshot release as a user would.
	Release = Gate{Suite: "release archive tests", Where: "tests/release",
		Off: func() string {
			if os.Getenv("DROVER_TEST_RELEASE_DIR") == "" {
				return "build a snapshot with .ci/release DIR --snapshot and set DROVER_TEST_RELEASE_DIR=DIR (.ci/run does)"
			}
			return ""
		}}
	// Bwrap: the sandbox's scenario tests run agents inside Debian's
	// bubblewrap, which needs user namespaces.
	Bwrap = Gate{Suite: "sandbox tests", Where: "tests/e2e", Files: true,
		Off: func() string {
			if _, err := exec.LookPath("bwrap"); err != nil {
				return "bwrap not installed or user namespaces refused: bwrap is not installed (apt-get install -y bubblewrap)"
			}
			out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--share-net", "true").CombinedOutput()
			if err != nil {
				return "bwrap not installed or user namespaces refused: " + strings.TrimSpace(string(out)) + " (" + err.Error() + ")"
			}
			return ""
		}}
	// SystemdAnalyze: the check of docs/drover.service.
	SystemdAnalyze = Gate{Suite: "systemd unit check", Where: "tests/service", Files: true,
		Off: func() string {
			if _, err := exec.LookPath("systemd-analyze"); err != nil {
				return "systemd-analyze is not installed (Debian package systemd)"
			}
			return ""
		}}
)

// All are the gates, in the summary's order.
func All() []Gate {
	return []Gate{Postgres, Chromium, RealCLIs, PGRestart, Release, SystemdAnalyze, Bwrap}
}

// PGCtl is the newest pg_ctl of Debian's PostgreSQL packages, or the one on
// PATH; "" when there is none.
func PGCtl() string {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Strings(bins)
	if len(bins) > 0 {
		return bins[len(bins)-1]
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return p
	}
	return ""
}

// Summary is the text the skip summary prints for gates: one line per gate
// that is off, or "" when none is. Opt-in long runs (DROVER_CHAOS_LONG,
// run by CI on its own) and fixture regeneration (the capture and generate
// tests) are not gates: a plain go test ./... is not meant to run them.
func Summary(gates []Gate) string {
	var b strings.Builder
	for _, g := range gates {
		if why := g.Off(); why != "" {
			b.WriteString("  " + g.Suite + " (" + g.Where + "): " + why + "\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "drover: go test skipped these suites here (go test -v shows each skip):\n" + b.String()
}

// Uncached keeps the result of t's package out of go test's cache. The go
// command caches a result with the files the test opened, but rechecks only
// those inside the module (a missing /usr/bin/chromium is not rechecked, so
// a skip was replayed from the cache after chromium was installed), and
// refuses to cache a result whose test opened a file modified less than two
// seconds before its check (cmd/go's modTimeCutoff). The test opens a stamp
// at the module root whose modification time is in the future.
func Uncached(t testing.TB) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Logf("gate: this result may be cached: %v", err)
		return
	}
	p := filepath.Join(root, stampName)
	future := time.Now().Add(24 * time.Hour)
	err = os.WriteFile(p, nil, 0o644)
	if err == nil {
		err = os.Chtimes(p, future, future)
	}
	if err != nil {
		t.Logf("gate: this result may be cached: %v", err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Logf("gate: this result may be cached: %v", err)
		return
	}
	f.Close()
}

// stampName is Uncached's file at the module root (.gitignore lists it).
const stampName = ".go-test-uncached"

// moduleRoot is the directory holding go.mod, above the working directory
// (go test runs a test binary in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}
