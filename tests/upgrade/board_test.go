package upgrade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The cards of the fixture board, by identifier (the order they are added in).
const (
	cardRetry    = "DRV-1" // failed once (counted); its retry is due in a year
	cardParked   = "DRV-2" // asked a question; parked in awaiting_input
	cardDone     = "DRV-3" // succeeded, then moved to done by hand
	cardBlocked  = "DRV-4" // blocked by hand with a reason
	cardGated    = "DRV-5" // its agent profile (gated) is paused by auth_failed
	cardReady    = "DRV-6" // added after serve stopped: ready, never run
	question     = "Blue or green?"
	blockReason  = "waiting for the staging API key"
	maxAttempts  = 3
	pausedAgent  = "gated"
	retryBackoff = "8760h" // a year: the retry stays in the future
)

// workflow is the WORKFLOW.md of the fixture board, its webhook pointed at
// hook (outbox rows are enqueued only for a configured channel).
func workflow(hook, node string) *testkit.Workflow {
	return testkit.NewWorkflow().
		Set("agents", "default: sim\nprofiles:\n  sim: {kind: sim}\n  "+pausedAgent+": {kind: sim}").
		Set("policy", fmt.Sprintf("max_attempts: %d\nbackoff: {base: %s, max: %s, jitter: 0}", maxAttempts, retryBackoff, retryBackoff)).
		Set("notify", "webhook: {url: "+hook+"}\nallow_private: true").
		Set("dispatch", "{node: "+node+", poll_interval: 200ms, lease: 3s}").
		Set("server", "{port: 0}")
}

// board is one drover installation: a directory with WORKFLOW.md and a store.
type board struct {
	t     *testing.T
	dir   string
	dsn   string
	serve *exec.Cmd
	done  chan struct{}
	log   string
}

// newBoard makes a board directory for a store at dsn ("" for a new SQLite
// file in it); node names its serve (the fixture's own node is not the
// test's, so a stale node row can never look alive).
func newBoard(t *testing.T, dsn, hook, node string) *board {
	t.Helper()
	b := &board{t: t, dir: t.TempDir(), dsn: dsn}
	if b.dsn == "" {
		b.dsn = "sqlite:" + filepath.Join(b.dir, ".drover", "drover.db")
	}
	workflow(hook, node).Write(t, b.dir)
	t.Cleanup(func() {
		if b.serve != nil {
			_ = b.serve.Process.Kill()
			<-b.done
		}
		if t.Failed() && b.log != "" {
			out, _ := os.ReadFile(b.log)
			t.Logf("serve log:\n%s", out)
		}
	})
	return b
}

// cli is the binary run on the board's store in its directory.
func (b *board) cli() testkit.CLI {
	return testkit.CLI{T: b.t, Dir: b.dir, Prefix: []string{"--store", b.dsn}}
}

// drover runs the binary on the board.
func (b *board) drover(args ...string) (stdout, stderr string, code int) {
	b.t.Helper()
	return b.cli().Run(nil, args...)
}

// ok runs a command that must succeed.
func (b *board) ok(args ...string) string { b.t.Helper(); return b.cli().OK(args...) }

// json runs a --json read command into v.
func (b *board) json(v any, args ...string) { b.t.Helper(); b.cli().JSON(v, args...) }

func (b *board) start() {
	b.t.Helper()
	b.log = filepath.Join(b.dir, "serve.log")
	f, err := os.Create(b.log)
	if err != nil {
		b.t.Fatal(err)
	}
	b.serve = exec.Command(testkit.Binary(b.t), "--store", b.dsn, "serve", "--log-level", "debug")
	b.serve.Dir = b.dir
	b.serve.Stdout, b.serve.Stderr = f, f
	if err := b.serve.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.done = make(chan struct{})
	go func() { _ = b.serve.Wait(); f.Close(); close(b.done) }()
}

// stop ends serve with SIGTERM, as systemd does.
func (b *board) stop() {
	b.t.Helper()
	_ = b.serve.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		b.t.Fatal("drover serve did not stop within 30s of SIGTERM")
	}
	b.serve = nil
}

// eventually polls cond every 100ms until it holds or within passes.
func (b *board) eventually(within time.Duration, what string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			b.t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type card struct {
	Identifier    string     `json:"identifier"`
	State         string     `json:"state"`
	RetryEpoch    int        `json:"retry_epoch"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	BlockReason   *struct {
		What string `json:"what"`
	} `json:"block_reason"`
}

type run struct {
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"`
	Kind    string `json:"kind"`
	Counted bool   `json:"counted"`
}

// Snapshot is what the fixture board looks like from outside: what the
// generator recorded (expect.json) and what today's drover must still show.
type Snapshot struct {
	Cards   map[string]CardView `json:"cards"`
	Paused  []string            `json:"paused_agents"`
	Parked  map[string]string   `json:"parked_questions"`
	Version string              `json:"written_by"` // drover version of the generator
}

// CardView is one card as the upgrade test compares it.
type CardView struct {
	State         string     `json:"state"`
	RetryEpoch    int        `json:"retry_epoch"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	BlockWhat     string     `json:"block_what,omitempty"`
	Runs          []run      `json:"runs"`
}

// snapshot reads the board through the CLI.
func (b *board) snapshot() Snapshot {
	b.t.Helper()
	s := Snapshot{Cards: map[string]CardView{}, Parked: map[string]string{}, Paused: []string{}}
	var cards []card
	b.json(&cards, "card", "ls")
	for _, c := range cards {
		v := CardView{State: c.State, RetryEpoch: c.RetryEpoch, NextAttemptAt: c.NextAttemptAt, Runs: []run{}}
		if c.BlockReason != nil {
			v.BlockWhat = c.BlockReason.What
		}
		b.json(&v.Runs, "runs", c.Identifier)
		sort.Slice(v.Runs, func(i, j int) bool { return v.Runs[i].Attempt < v.Runs[j].Attempt })
		s.Cards[c.Identifier] = v
	}
	var agents []struct{ Name, State string }
	b.json(&agents, "agent", "ls")
	for _, a := range agents {
		if a.State == "paused" {
			s.Paused = append(s.Paused, a.Name)
		}
	}
	var st struct {
		Parked []struct {
			Identifier string `json:"identifier"`
			Question   string `json:"question"`
		} `json:"parked"`
	}
	b.json(&st, "status")
	for _, p := range st.Parked {
		s.Parked[p.Identifier] = p.Question
	}
	return s
}
