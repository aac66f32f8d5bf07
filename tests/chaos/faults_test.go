package chaos_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// privatePG is a PostgreSQL server of the test's own (initdb in a temp
// dir, its own port), so restarting it disturbs nobody else's tests.
type privatePG struct {
	t                *testing.T
	bin, data, sock  string
	port             int
	asPostgres, logf string
}

func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	gate.PGRestart.Require(t) // pg_ctl
	p := &privatePG{t: t, bin: filepath.Dir(gate.PGCtl())}
	dir, err := os.MkdirTemp("", "drover-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p.data, p.sock, p.logf = filepath.Join(dir, "data"), filepath.Join(dir, "sock"), filepath.Join(dir, "pg.log")
	if err := os.MkdirAll(p.sock, 0o777); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // PostgreSQL refuses to run as root
		p.asPostgres = "postgres"
		if out, err := exec.Command("chown", "-R", "postgres", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot hand the data directory to the postgres user: %v %s", err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	p.run("initdb", "-D", p.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	p.ctl("start")
	t.Cleanup(func() { p.ctlQuiet("stop", "-m", "immediate") })
	return p
}

func (p *privatePG) run(tool string, args ...string) {
	p.t.Helper()
	cmd := exec.Command(filepath.Join(p.bin, tool), args...)
	if p.asPostgres != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.asPostgres, "--", filepath.Join(p.bin, tool)}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
}

func (p *privatePG) ctlArgs(action string, extra ...string) []string {
	return append([]string{action, "-D", p.data, "-w", "-l", p.logf,
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", p.port, p.sock)}, extra...)
}

func (p *privatePG) ctl(action string, extra ...string) {
	p.run("pg_ctl", p.ctlArgs(action, extra...)...)
}

func (p *privatePG) ctlQuiet(action string, extra ...string) {
	args := p.ctlArgs(action, extra...)
	cmd := exec.Command(filepath.Join(p.bin, "pg_ctl"), args...)
	if p.asPostgres != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.asPostgres, "--", filepath.Join(p.bin, "pg_ctl")}, args...)...)
	}
	_ = cmd.Run()
}

func (p *privatePG) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// TestPostgresRestart stops PostgreSQL for longer than a lease while two
// drover processes run agents, then starts it again. The agents keep
// running, `drover status` reports the outage, and every run is routed once
// the database is back, with no run lost to lease_lost or interrupted.
func TestPostgresRestart(t *testing.T) {
	gate.PGRestart.Require(t) // restarts a PostgreSQL server of its own
	pg := startPrivatePG(t)
	c := newCluster(t, clusterOpts{DSN: pg.dsn(), Nodes: 2, Slots: 3, MinSleepMS: 5000, MaxSleepMS: 3000, FailPercent: 0})
	for _, nd := range c.nodes {
		c.start(nd)
	}
	if err := c.addCards(6); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "six agents running", func() bool {
		lives, _ := c.mon.snapshot()
		return len(lives) == 6
	}, func() string { lives, _ := c.mon.snapshot(); return fmt.Sprint(len(lives), " started") })

	pg.ctl("stop", "-m", "fast")
	down := time.Now()
	time.Sleep(500 * time.Millisecond)
	// The CLI says the store is unavailable, in its JSON error.
	out, err := c.drover("--json", "status")
	if err == nil || !strings.Contains(err.Error(), "store_unavailable") {
		t.Errorf("drover status with the database down: err %v, out %s; want a store_unavailable error", err, out)
	}
	for time.Since(down) < lease+2*time.Second {
		time.Sleep(200 * time.Millisecond)
		for _, nd := range c.nodes {
			if nd.exitedEarly() {
				t.Fatalf("%s exited while the database was down:\n%s", nd.name, c.tail(nd, 20))
			}
		}
	}
	lives, _ := c.mon.snapshot()
	alive := 0
	for _, l := range lives {
		if !l.Ended && !l.Gone {
			alive++
		}
	}
	pg.ctl("start")
	t.Logf("database down for %s; %d of %d agents were still running at the end of it (the others finished meanwhile)",
		time.Since(down).Round(100*time.Millisecond), alive, len(lives))
	for _, l := range lives {
		if l.Ended && l.Code == "term" {
			t.Errorf("agent for %s was stopped during the outage", l.Card)
		}
	}

	// The nodes report the outage in drover status once they can write again.
	waitFor(t, 15*time.Second, "store_error in drover status --json", func() bool {
		out, err := c.drover("--json", "status")
		if err != nil {
			return false
		}
		var s struct {
			Errors []struct{ Code, Source, Message string } `json:"errors"`
		}
		if json.Unmarshal(out, &s) != nil {
			return false
		}
		for _, e := range s.Errors {
			if e.Code == "store_error" && strings.Contains(e.Message, "unreachable") {
				t.Logf("status: %s %s: %s", e.Code, e.Source, e.Message)
				return true
			}
		}
		return false
	}, func() string { out, err := c.drover("--json", "status"); return fmt.Sprint(err, string(out)) })

	if err := c.waitSettled(6, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	var rep report
	c.check(&rep)
	for _, v := range rep.Violations {
		t.Errorf("violation: %s", v)
	}
	t.Logf("after the restart: %s", rep)
	if rep.Outcomes[string(board.OutcomeSucceeded)] != 6 || rep.Runs != 6 {
		t.Errorf("want 6 runs, all succeeded (no run lost to the outage); got %d runs: %v", rep.Runs, rep.Outcomes)
	}
}

// TestReadOnlySQLite makes the SQLite file and its WAL read-only under a
// store that exists: drover says so clearly and nothing is corrupted.
func TestReadOnlySQLite(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "drover.db")
	c := newCluster(t, clusterOpts{DSN: "sqlite:" + db, Nodes: 1})
	if err := c.addCards(3); err != nil {
		t.Fatal(err)
	}
	// As root, permissions do not bind: run the CLI as nobody then.
	asUser := func(cmd *exec.Cmd) {}
	if os.Geteuid() == 0 {
		for _, p := range []string{filepath.Dir(dir), dir, c.dir, filepath.Dir(c.bin), c.nodes[0].config, filepath.Dir(c.nodes[0].config)} {
			os.Chmod(p, 0o755)
		}
		os.Chmod(c.nodes[0].config, 0o644)
		asUser = func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
	}
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		if err := os.Chmod(f, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o555) // SQLite may not create a new -wal or -shm either
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	sum := func() map[string]string {
		m := map[string]string{}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			m[f] = fmt.Sprintf("%x", b)
		}
		return m
	}
	before := sum()
	for _, args := range [][]string{{"card", "add", "--title", "refused"}, {"serve"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, c.bin, append([]string{"--config", c.nodes[0].config}, args...)...)
		asUser(cmd)
		out, err := cmd.CombinedOutput()
		cancel()
		msg := string(out)
		t.Logf("drover %s on a read-only store: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(msg))
		if err == nil {
			t.Errorf("drover %s succeeded on a read-only store", strings.Join(args, " "))
		}
		if !strings.Contains(msg, "read-only") || !strings.Contains(msg, db) {
			t.Errorf("drover %s: the error does not say the store file %s is read-only: %s", strings.Join(args, " "), db, msg)
		}
	}
	after := sum()
	for f := range before {
		if before[f] != after[f] {
			t.Errorf("%s changed while read-only", f)
		}
	}
	// Writable again: intact, and usable.
	os.Chmod(dir, 0o755)
	for _, f := range files {
		os.Chmod(f, 0o644)
	}
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q %v", ok, err)
	}
	raw.Close()
	st, err := c.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cards, err := st.ListCards(context.Background(), store.CardFilter{})
	if err != nil || len(cards) != 3 {
		t.Errorf("after making it writable: %d cards, %v; want the 3 from before", len(cards), err)
	}
	if err := c.addCards(1); err != nil {
		t.Errorf("writable again, but: %v", err)
	}
}
