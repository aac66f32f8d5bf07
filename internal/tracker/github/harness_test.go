package github_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/github"
)

// world is drover's tracker pieces and a real dispatcher with the sim agent
// on a SQLite store, against the fake GitHub. Each step (sync, project) is
// driven by the test, so the fake's request log is exact.
type world struct {
	t    *testing.T
	gh   *fake.Server
	st   store.Store
	cfg  *config.Config
	tr   *github.Tracker
	sync *tracker.Syncer
	proj *tracker.Projector
	del  *tracker.Deliverer
	logs *syncBuffer

	mu       sync.Mutex
	statuses []string
	refused  []string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func workflow(gh *fake.Server, extra ...string) *testkit.Workflow {
	wf := testkit.NewWorkflow().
		Set("agents", testkit.PlannerAgents).
		Set("policy", "max_attempts: 2\nbackoff: {base: 20ms, max: 50ms, jitter: 0}").
		Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms, max_concurrent: 4}").
		Set("tracker", fmt.Sprintf("kind: github\nendpoint: %s\napi_key: test-token\nrepo: acme/app", gh.URL))
	for i := 0; i+1 < len(extra); i += 2 {
		wf.Set(extra[i], extra[i+1])
	}
	return wf
}

func newWorld(t *testing.T, extra ...string) *world {
	t.Helper()
	gh := fake.New("acme", "app")
	gh.Token = "test-token"
	t.Cleanup(gh.Close)
	return newWorldOn(t, gh, extra...)
}

func newWorldOn(t *testing.T, gh *fake.Server, extra ...string) *world {
	t.Helper()
	dir := t.TempDir()
	cfg := workflow(gh, extra...).Config(t, dir)
	st := testkit.Store(t, testkit.SQLite)
	tr, err := github.New(github.Options{Config: cfg.Tracker})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, gh: gh, st: st, cfg: cfg, tr: tr, logs: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(w.logs, nil))
	b := func() board.Board { return cfg.Board }
	own := map[board.Role]string{}
	for r, m := range cfg.Tracker.Roles {
		own[r] = m.Label
	}
	w.sync = &tracker.Syncer{Store: st, Tracker: tr, Board: b, Log: log, OwnLabels: tracker.OwnLabels(own), Status: func(m string) {
		w.mu.Lock()
		w.statuses = append(w.statuses, m)
		w.mu.Unlock()
	}}
	w.proj = &tracker.Projector{Store: st, Board: b, Kind: "github", Log: log}
	w.del = &tracker.Deliverer{Store: st, Tracker: tr, Log: log, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		Refused: func(m string) { w.mu.Lock(); w.refused = append(w.refused, m); w.mu.Unlock() }}
	if err := tr.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := w.proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	gh.ResetLog()
	return w
}

// serve starts the dispatcher; it stops when the test ends.
func (w *world) serve() {
	d, err := dispatch.New(dispatch.Options{Store: w.st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.t.TempDir(), "logs")})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	w.t.Cleanup(func() { cancel(); <-done })
}

// issue adds an issue whose card plays the sim kinds given.
func (w *world) issue(title, spec string, labels ...string) int {
	body := "Please do it.\n\n```drover\n" + spec + "\n```\n"
	return w.gh.AddIssue(title, body, labels...)
}

func (w *world) syncOK() {
	w.t.Helper()
	if err := w.sync.Pass(context.Background()); err != nil {
		w.t.Fatalf("sync: %v", err)
	}
}

// project writes and delivers every projection due, until none is pending.
func (w *world) project() {
	w.t.Helper()
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		if _, err := w.proj.Pass(ctx); err != nil {
			w.t.Fatal(err)
		}
		if _, _, err := w.del.Tick(ctx); err != nil {
			w.t.Fatal(err)
		}
		if w.pending() == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatalf("projections still pending: %d", w.pending())
}

func (w *world) pending() int {
	rows, err := w.st.ListOutbox(context.Background(), store.OutboxFilter{Pending: store.Bool(true)})
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Channel == tracker.Channel {
			n++
		}
	}
	return n
}

// card is the card mirroring issue n.
func (w *world) card(n int) board.Card {
	w.t.Helper()
	cs, err := w.st.ListCards(context.Background(), store.CardFilter{External: fmt.Sprintf("github:%d", n)})
	if err != nil || len(cs) != 1 {
		w.t.Fatalf("card of issue #%d: %v (%d cards)", n, err, len(cs))
	}
	return cs[0]
}

func (w *world) waitState(n int, state string) board.Card {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := w.card(n)
		if c.State == state && c.Claim == nil {
			return c
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("issue #%d: card still %s (%s), want %s", n, c.State, c.StateReason, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (w *world) runs(c board.Card) []board.Run {
	rs, err := w.st.ListRuns(context.Background(), store.RunFilter{CardID: c.ID})
	if err != nil {
		w.t.Fatal(err)
	}
	return rs
}

// calls is the fake's request log since the last reset as "METHOD path
// body" lines (bodies of writes only).
func (w *world) calls() []string {
	var out []string
	for _, r := range w.gh.Log() {
		line := r.Method + " " + r.Path
		if r.Method != "GET" && r.Body != "" && !strings.Contains(r.Path, "/comments") {
			line += " " + r.Body
		}
		out = append(out, fmt.Sprintf("%s → %d", line, r.Status))
	}
	w.gh.ResetLog()
	return out
}

func sameCalls(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: API calls\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func sleep() { time.Sleep(10 * time.Millisecond) }

func itoa(n int64) string { return fmt.Sprint(n) }

func newTracker(t *testing.T, cfg config.Tracker) *github.Tracker {
	t.Helper()
	tr, err := github.New(github.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
