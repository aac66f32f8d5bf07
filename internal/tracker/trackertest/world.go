// Package trackertest is the conformance suite every tracker kind passes
// against its fake (as the store has storetest), and the harness the
// kinds' own tests share: a World of drover's tracker pieces and a real
// dispatcher with the sim agent on a SQLite store, each step (sync,
// projection) driven by the test so the fake's request log is exact.
package trackertest

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/drover-dev/drover/internal/tracker"
)

// Fake is a tracker kind's fake server as the suite drives it: what a
// person does in the tracker, what the tracker shows, and the faults it
// answers with. Ids are the tracker's issue ids (board.External.ID).
type Fake interface {
	// AddIssue adds an issue drover may dispatch (open, in an active
	// state) and returns its id.
	AddIssue(title, body string, labels ...string) string
	// AddIgnored adds one drover must never dispatch (GitHub: a pull
	// request; Linear: an issue in a state that is not active).
	AddIgnored(title string) string
	// Edit changes an issue's title and body.
	Edit(id, title, body string)
	// Block records, the tracker's own way, that blocker blocks id.
	Block(id, blocker string)
	// Close ends the issue (closed; a terminal state).
	Close(id string)
	PersonComments(id, user, body string)
	// Shows is what the issue shows of drover's moves: its drover label
	// (GitHub), else its state ("open", "In Review").
	Shows(id string) string
	// Comments are the bodies of the issue's comments, oldest first.
	Comments(id string) []string
	// Down answers every request with a 5xx until Up.
	Down()
	Up()
	// Malformed answers the next request with a body that is not what
	// the API documents.
	Malformed()
	// RateLimit answers the next request with the tracker's rate limit,
	// lifting at until.
	RateLimit(until time.Time)
	// Refuse makes the tracker refuse the write that shows shown (a label
	// or a state).
	Refuse(shown string)
	// FailFor makes the tracker fail (a 5xx) every request about issue
	// id, alone or in a batch, until Up: the tracker failing for that one
	// issue (its comments, its refresh, writes to it).
	FailFor(id string)
	// Corrupt makes the tracker send issue id with a field of the wrong
	// type (data drover cannot read), until Up.
	Corrupt(id string)
	// Calls are the requests since the last call, one line each in the
	// kind's own terms (Kit.Want compares them).
	Calls() []string
}

// Kit is what a tracker kind gives the suite and its own tests.
type Kit struct {
	Kind string
	// Start starts the kind's fake (closed when the test ends) and returns
	// it with the tracker section of WORKFLOW.md that points drover at it.
	Start func(t *testing.T) (Fake, string)
	// New makes the kind's Tracker from the loaded configuration.
	New func(t *testing.T, cfg tracker.Config) tracker.Tracker
	// Want are the requests the kind sends at a step of the suite (a
	// checkpoint's name: "first sync", "success", …), as Fake.Calls
	// writes them; a line ending in "…" matches any line it starts. A
	// step without an entry is not compared.
	Want map[string][]string
}

// World is one test's drover against one fake.
type World struct {
	T       *testing.T
	Kit     Kit
	Fake    Fake
	Store   store.Store
	Cfg     *config.Config
	Tracker tracker.Tracker
	Sync    *tracker.Syncer
	Proj    *tracker.Projector
	Del     *tracker.Deliverer
	Logs    *Buffer // what the tracker pieces logged

	mu       sync.Mutex
	statuses []string
	refused  []string
}

// Workflow is the suite's WORKFLOW.md with tracker as its tracker section:
// the sim agent (and planner, whose cards need a plan), two attempts with
// short backoffs, a node polling every 100ms. extra are more sections, as
// pairs of key and YAML.
func Workflow(tracker string, extra ...string) *testkit.Workflow {
	wf := testkit.NewWorkflow().
		Set("agents", testkit.PlannerAgents).
		Set("policy", "max_attempts: 2\nbackoff: {base: 20ms, max: 50ms, jitter: 0}").
		Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms, max_concurrent: 4}").
		Set("tracker", tracker)
	for i := 0; i+1 < len(extra); i += 2 {
		wf.Set(extra[i], extra[i+1])
	}
	return wf
}

// NewWorld starts the kit's fake and drover's tracker pieces against it;
// extra are sections of WORKFLOW.md (see Workflow). The tracker is checked,
// the projector reconciled and the fake's log cleared.
func NewWorld(t *testing.T, kit Kit, extra ...string) *World {
	t.Helper()
	f, section := kit.Start(t)
	return Attach(t, kit, f, Workflow(section, extra...).Config(t, t.TempDir()))
}

// Attach is NewWorld with a fake already started and a configuration of
// the test's own (a WORKFLOW.md loaded as it ships).
func Attach(t *testing.T, kit Kit, f Fake, cfg *config.Config) *World {
	t.Helper()
	tr := kit.New(t, cfg.Tracker)
	st := testkit.Store(t, testkit.SQLite)
	w := &World{T: t, Kit: kit, Fake: f, Store: st, Cfg: cfg, Tracker: tr, Logs: &Buffer{}}
	log := slog.New(slog.NewTextHandler(w.Logs, nil))
	b := func() board.Board { return cfg.Board }
	own := map[board.Role]string{}
	for r, m := range cfg.Tracker.Roles {
		own[r] = m.Label
	}
	w.Sync = &tracker.Syncer{Store: st, Tracker: tr, Board: b, Log: log, OwnLabels: tracker.OwnLabels(own), Status: func(m string) {
		w.mu.Lock()
		w.statuses = append(w.statuses, m)
		w.mu.Unlock()
	}}
	w.Proj = &tracker.Projector{Store: st, Board: b, Kind: kit.Kind, Log: log}
	w.Del = &tracker.Deliverer{Store: st, Tracker: tr, Log: log, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		Refused: func(m string) { w.mu.Lock(); w.refused = append(w.refused, m); w.mu.Unlock() }}
	if err := tr.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := w.Proj.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Calls()
	return w
}

// Serve starts the dispatcher; it stops when the test ends.
func (w *World) Serve() {
	d, err := dispatch.New(dispatch.Options{Store: w.Store, Config: w.Cfg, Node: "n1", LogDir: filepath.Join(w.T.TempDir(), "logs")})
	if err != nil {
		w.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	w.T.Cleanup(func() { cancel(); <-done })
}

// Park puts issue id's card in the parked column with question, as a run
// that asked would (no run is made), and returns it.
func (w *World) Park(id, question string) board.Card {
	w.T.Helper()
	c := w.Card(id)
	col, _ := w.Cfg.Board.First(board.RoleParked)
	next := c
	next.State, next.StateReason = col.Name, "asked: "+question
	ev := board.Event{CardID: c.ID, Type: board.EvParked, Actor: "dispatcher:n1", Reason: next.StateReason,
		Data: []byte(fmt.Sprintf(`{"to":%q,"question":%q}`, col.Name, question))}
	if err := w.Store.Apply(context.Background(), store.Change{Card: &next, Events: []board.Event{ev},
		Comments: []board.Comment{{CardID: c.ID, Author: "dispatcher:n1", Body: "Question: " + question}}}); err != nil {
		w.T.Fatal(err)
	}
	return w.Card(id)
}

// Answered is the answer the events of issue id's card record (its last
// answered event), by whom, and whether there is one.
func (w *World) Answered(id string) (answer, actor string, ok bool) {
	w.T.Helper()
	for _, e := range w.Events(w.Card(id)) {
		if e.Type == board.EvAnswered {
			var d struct{ Answer string }
			_ = json.Unmarshal(e.Data, &d)
			answer, actor, ok = d.Answer, e.Actor, true
		}
	}
	return answer, actor, ok
}

// Issue adds an issue whose body carries spec as its ```drover block.
func (w *World) Issue(title, spec string, labels ...string) string {
	return w.Fake.AddIssue(title, "Please do it.\n\n```drover\n"+spec+"\n```\n", labels...)
}

// SyncOK runs one sync pass, which must succeed.
func (w *World) SyncOK() {
	w.T.Helper()
	if err := w.Sync.Pass(context.Background()); err != nil {
		w.T.Fatalf("sync: %v", err)
	}
}

// Project writes and delivers every projection due, until none is pending.
func (w *World) Project() {
	w.T.Helper()
	ctx := context.Background()
	for range 50 {
		if _, err := w.Proj.Pass(ctx); err != nil {
			w.T.Fatal(err)
		}
		if _, _, err := w.Del.Tick(ctx); err != nil {
			w.T.Fatal(err)
		}
		if w.Pending() == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.T.Fatalf("projections still pending: %d", w.Pending())
}

// Pending counts the tracker projections not delivered yet.
func (w *World) Pending() int {
	rows, err := w.Store.ListOutbox(context.Background(), store.OutboxFilter{Pending: store.Bool(true)})
	if err != nil {
		w.T.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Channel == tracker.Channel {
			n++
		}
	}
	return n
}

// Card is the card mirroring issue id.
func (w *World) Card(id string) board.Card {
	w.T.Helper()
	cs, err := w.Store.ListCards(context.Background(), store.CardFilter{External: w.Kit.Kind + ":" + id})
	if err != nil || len(cs) != 1 {
		w.T.Fatalf("card of issue %s: %v (%d cards)", id, err, len(cs))
	}
	return cs[0]
}

// Cards are every card mirroring an issue.
func (w *World) Cards() []board.Card {
	w.T.Helper()
	cs, err := w.Store.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if err != nil {
		w.T.Fatal(err)
	}
	return cs
}

// WaitState waits until issue id's card is in state and unclaimed.
func (w *World) WaitState(id, state string) board.Card {
	w.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := w.Card(id)
		if c.State == state && c.Claim == nil {
			return c
		}
		if time.Now().After(deadline) {
			w.T.Fatalf("issue %s: card still %s (%s), want %s", id, c.State, c.StateReason, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitRunning waits until issue id's card has a started run.
func (w *World) WaitRunning(id string) board.Card {
	w.T.Helper()
	for range 2000 {
		c := w.Card(id)
		if rs := w.Runs(c); c.State == "in_progress" && len(rs) == 1 && rs[0].StartedAt != nil {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.T.Fatalf("issue %s never ran", id)
	return board.Card{}
}

// Runs are card c's runs.
func (w *World) Runs(c board.Card) []board.Run {
	rs, err := w.Store.ListRuns(context.Background(), store.RunFilter{CardID: c.ID})
	if err != nil {
		w.T.Fatal(err)
	}
	return rs
}

// Events are card c's events, oldest first.
func (w *World) Events(c board.Card) []board.Event {
	evs, err := w.Store.ListEvents(context.Background(), store.EventFilter{CardID: c.ID})
	if err != nil {
		w.T.Fatal(err)
	}
	return evs
}

// Statuses are what the syncer told the node's status, in order.
func (w *World) Statuses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.statuses...)
}

// Refused are the refusals the deliverer reported, in order.
func (w *World) Refused() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.refused...)
}

// Calls reads the fake's requests since the last read and, when the kit
// wants some at step, compares them.
func (w *World) Calls(step string) []string {
	w.T.Helper()
	got := w.Fake.Calls()
	if want, ok := w.Kit.Want[step]; ok && !match(got, want) {
		w.T.Errorf("%s: requests\n got:\n  %s\nwant:\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	return got
}

func match(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i, g := range got {
		if p, ok := strings.CutSuffix(want[i], "…"); ok && strings.HasPrefix(g, p) || g == want[i] {
			continue
		}
		return false
	}
	return true
}

// Shown is what the issue shows for role under the world's tracker.roles
// (its label, else its state), and whether the role is shown at all.
func (w *World) Shown(role board.Role) (string, bool) {
	m, ok := w.Cfg.Tracker.Roles[role]
	switch {
	case !ok:
		return "", false
	case m.Label != "":
		return m.Label, true
	}
	return m.State, m.State != ""
}

// Shows fails the test unless issue id shows role (when tracker.roles
// shows it at all).
func (w *World) Shows(id string, role board.Role) {
	w.T.Helper()
	if want, ok := w.Shown(role); ok {
		if got := w.Fake.Shows(id); got != want {
			w.T.Errorf("issue %s shows %q, want %q (%s)", id, got, want, role)
		}
	}
}

// Buffer is a bytes.Buffer safe for the log's concurrent writes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Count is how many times s occurs in what was logged.
func (s *Buffer) Count(sub string) int { return strings.Count(s.String(), sub) }
