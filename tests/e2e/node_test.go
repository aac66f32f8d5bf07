package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// A second drover serve under the same node name is refused while the first
// lives, even when the board idles on a slow poll; the first one's running
// card is left alone.
func TestSecondServeWithTheSameNodeNameIsRefused(t *testing.T) {
	e := newEnv(t, wf{Default: "sim", Poll: "60s", Lease: "3s"}, "", testkit.SQLite)
	c := e.addCard("long", "--spec", `{"sim":["succeeded"],"sim_delay":"4s"}`)
	e.start()
	eventually(t, 10*time.Second, "the card to start", func() bool { return e.card(c.Identifier).Claim != nil })
	time.Sleep(4 * time.Second) // longer than a lease: the first node's row must stay fresh on its own
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.Binary(t), "serve")
	cmd.Dir, cmd.Env = e.dir, e.cmdEnv()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), "node name") {
		t.Fatalf("second serve: err %v, output:\n%s", err, out)
	}
	eventually(t, 15*time.Second, "the card to finish", func() bool { return e.card(c.Identifier).State == "review" })
	for _, r := range e.runs(c.Identifier) {
		if r.Outcome != "succeeded" {
			t.Fatalf("run %d ended %s: the refused process must not touch the live run", r.Attempt, r.Outcome)
		}
	}
}

// Two drover serve with one node name started at the same instant: exactly
// one keeps running, the other exits naming the node and the fix. Repeated,
// since the race it guards against showed in about half of the tries.
func TestSimultaneousServesWithOneNodeName(t *testing.T) {
	for _, b := range testkit.Backends {
		t.Run(string(b), func(t *testing.T) { simultaneousServes(t, b) })
	}
}

func simultaneousServes(t *testing.T, b testkit.Backend) {
	e := newEnv(t, wf{Default: "sim", Lease: "3s"}, "", b)
	dsn := e.dsn
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(e.dir, ".drover", "drover.db")
	}
	testkit.Open(t, dsn) // the store exists before the race
	for round := range 10 {
		type proc struct {
			cmd  *exec.Cmd
			out  bytes.Buffer
			done chan error
		}
		ps := []*proc{{done: make(chan error, 1)}, {done: make(chan error, 1)}}
		for _, p := range ps {
			p.cmd = exec.Command(testkit.Binary(t), "serve")
			p.cmd.Dir, p.cmd.Env = e.dir, e.cmdEnv()
			p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		}
		for _, p := range ps {
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range ps {
			go func() { p.done <- p.cmd.Wait() }()
		}
		var loser, winner *proc
		select {
		case err := <-ps[0].done:
			loser, winner = ps[0], ps[1]
			loser.done <- err
		case err := <-ps[1].done:
			loser, winner = ps[1], ps[0]
			loser.done <- err
		case <-time.After(15 * time.Second):
			for _, p := range ps {
				_ = p.cmd.Process.Kill()
			}
			t.Fatalf("round %d: both serves with one node name stayed up", round)
		}
		err := <-loser.done
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(loser.out.String(), "node name") ||
			!strings.Contains(loser.out.String(), "dispatch.node") {
			t.Fatalf("round %d: the loser exited with %v; want a failure naming the node and dispatch.node:\n%s", round, err, loser.out.String())
		}
		select {
		case err := <-winner.done:
			t.Fatalf("round %d: the winner exited too (%v):\n%s", round, err, winner.out.String())
		case <-time.After(500 * time.Millisecond):
		}
		_ = winner.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-winner.done:
		case <-time.After(30 * time.Second):
			_ = winner.cmd.Process.Kill()
			t.Fatalf("round %d: the winner did not stop on SIGTERM", round)
		}
	}
}

// A node row left by a dead process whose PID now belongs to a live one (a
// reboot, a zombie, PID reuse) does not block start-up once its hold lapsed.
func TestStaleNodeRowWithAReusedPIDDoesNotBlock(t *testing.T) {
	e := newEnv(t, wf{Default: "sim", Lease: "3s"}, "", testkit.SQLite)
	st := testkit.Open(t, "sqlite:"+filepath.Join(e.dir, ".drover", "drover.db"))
	host, _ := os.Hostname()
	long := time.Now().Add(-time.Hour)
	// The test process is alive: its PID stands for the reused one. The node
	// name is the one serve takes by default (the host name).
	if err := st.TouchNode(context.Background(), store.Node{Name: host, PID: os.Getpid(), StartedAt: long, SeenAt: long,
		Instance: "dead-instance", LeaseUntil: long.Add(3 * time.Second), Status: json.RawMessage(`{"host":"` + host + `"}`)}); err != nil {
		t.Fatal(err)
	}
	c := e.addCard("after the stale row", "--spec", `{"sim":["succeeded"]}`)
	e.start()
	eventually(t, 15*time.Second, "the card to be run despite the stale node row", func() bool { return e.card(c.Identifier).State == "review" })
}
