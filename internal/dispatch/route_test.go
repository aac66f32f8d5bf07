package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestRoutingTwiceIsANoOp routes the same finished run twice (a duplicate
// tick), then once more as a racing recovery would: the card, the run, the
// events and the outbox are exactly as after the first routing.
func TestRoutingTwiceIsANoOp(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		ctx := context.Background()
		st := testkit.Store(t, backend)
		cfg := testkit.NewWorkflow().Set("board", "{prefix: DRV}").Set("policy", "{max_attempts: 1}").
			Prompt("Work on {{ card.title }}.").Config(t, t.TempDir())
		notices := 0
		d, err := New(Options{Store: st, Config: cfg, Node: "n1", LogDir: t.TempDir(),
			Outbox: func(_ *config.Config, n Notice) []store.OutboxItem {
				notices++
				return []store.OutboxItem{{Key: n.Key + "/test", Channel: "webhook", Event: n.Event, CardID: n.Card.ID, Payload: []byte(`{}`)}}
			}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "fails", State: "ready", Spec: []byte(`{"sim":["agent_failed"]}`)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		// Claim it and open attempt 1, as claimAndStart does.
		now := time.Now().UTC()
		claimed := c
		claimed.Claim = &board.Claim{Owner: "n1", Epoch: c.Version + 1, LeaseUntil: now.Add(time.Minute)}
		claimed.State = "in_progress"
		run := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: claimed.Claim.Epoch, Node: "n1", Agent: "sim", ClaimedAt: now}
		if err := st.Apply(ctx, store.Change{Card: &claimed, NewRun: &run}); err != nil {
			t.Fatal(err)
		}
		cls := policy.Classification{Kind: policy.KindAgentFailed, Message: "tests failed", Source: "test"}
		code := 1
		res := &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: code}}

		if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: cls, res: res}); err != nil {
			t.Fatal(err)
		}
		type snap struct {
			card   board.Card
			run    board.Run
			events int
			outbox []store.OutboxItem
		}
		take := func() snap {
			cur, err := st.GetCard(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			r, err := st.GetRun(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := st.ListEvents(ctx, store.EventFilter{CardID: c.ID})
			if err != nil {
				t.Fatal(err)
			}
			ob, err := st.ListOutbox(ctx, store.OutboxFilter{CardID: c.ID})
			if err != nil {
				t.Fatal(err)
			}
			return snap{cur, r, len(evs), ob}
		}
		first := take()
		if first.card.State != "blocked" || first.card.GaveUp == nil || first.run.Outcome != board.OutcomeFailed {
			t.Fatalf("first routing: state %s gave_up %v outcome %s; want blocked with a give-up stamp", first.card.State, first.card.GaveUp, first.run.Outcome)
		}
		if len(first.outbox) != 1 || first.outbox[0].Event != policy.NotifyGaveUp {
			t.Fatalf("first routing wrote %d outbox rows %+v; want one gave_up", len(first.outbox), first.outbox)
		}

		// A duplicate tick routes it again; a racing recovery routes it as interrupted.
		if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: cls, res: res}); err != nil {
			t.Fatalf("second routing: %v", err)
		}
		intr := policy.Classification{Kind: policy.KindInterrupted, Message: "recovered", Source: "recovery"}
		if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: intr, recovering: true}); err != nil {
			t.Fatalf("recovery routing: %v", err)
		}
		again := take()
		if again.card.Version != first.card.Version || again.card.State != first.card.State {
			t.Errorf("card changed: version %d→%d state %s→%s", first.card.Version, again.card.Version, first.card.State, again.card.State)
		}
		if again.run.Outcome != first.run.Outcome || again.run.Kind != first.run.Kind || !again.run.FinishedAt.Equal(*first.run.FinishedAt) {
			t.Errorf("run changed: %s/%s → %s/%s", first.run.Outcome, first.run.Kind, again.run.Outcome, again.run.Kind)
		}
		if again.events != first.events {
			t.Errorf("events: %d → %d", first.events, again.events)
		}
		if notices != 1 {
			t.Errorf("%d notices built for one finished run, want 1", notices)
		}
		if len(again.outbox) != 1 {
			t.Errorf("outbox rows: %d, want still 1: %+v", len(again.outbox), again.outbox)
		}
	})
}

// replyLost commits its first Apply and then fails it as a store whose
// connection dropped before the commit's reply would.
type replyLost struct {
	store.Store
	lost bool
}

func (s *replyLost) Apply(ctx context.Context, ch store.Change) error {
	err := s.Store.Apply(ctx, ch)
	if err == nil && !s.lost && ch.Run != nil {
		s.lost = true
		return fmt.Errorf("commit: connection reset: %w", store.ErrUnavailable)
	}
	return err
}

// A routing whose commit went through but whose reply was lost retries,
// finds the run routed, and still logs the run's end as the store holds it:
// an operator reading the log sees every run finish once.
func TestARoutingWhoseReplyWasLostLogsWhatTheStoreHolds(t *testing.T) {
	ctx := context.Background()
	st := &replyLost{Store: testkit.Store(t, testkit.SQLite)}
	cfg := testkit.NewWorkflow().Set("board", "{prefix: DRV}").Set("policy", "{max_attempts: 1}").
		Prompt("Work on {{ card.title }}.").Config(t, t.TempDir())
	var buf bytes.Buffer
	d, err := New(Options{Store: st, Config: cfg, Node: "n1", LogDir: t.TempDir(), Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "fails", State: "ready"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	claimed, run := claimWithRun(t, st.Store, c)
	cls := policy.Classification{Kind: policy.KindAgentFailed, Message: "tests failed", Source: "test"}
	res := &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 1}}
	if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: cls, res: res}); err != nil {
		t.Fatal(err)
	}
	if !st.lost {
		t.Fatal("the routing's write never went through the lossy store")
	}
	cur, err := st.GetCard(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.State != "blocked" {
		t.Fatalf("card in %s, want blocked (gave up after its one attempt)", cur.State)
	}
	ends := runEnds(buf.Bytes())
	if len(ends) != 1 {
		t.Fatalf("%d \"run finished\" lines, want 1:\n%s", len(ends), buf.String())
	}
	if e := ends[0]; e["run_id"] != run.ID || e["card_id"] != c.ID || e["outcome"] != string(board.OutcomeFailed) || e["state"] != "blocked" {
		t.Errorf("the run's end logged as %v; want run %s of card %s, failed, blocked", e, run.ID, c.ID)
	}
}

func (s *replyLost) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	refused, err := s.Store.ApplyAll(ctx, chs)
	if err == nil && !s.lost {
		s.lost = true
		return nil, fmt.Errorf("commit: connection reset: %w", store.ErrUnavailable)
	}
	return refused, err
}

// A batch of routings whose commit went through but whose reply was lost:
// each run is routed again alone, finds itself routed, and its end is
// logged once, as the store holds it.
func TestABatchWhoseReplyWasLostLogsEachRunOnce(t *testing.T) {
	ctx := context.Background()
	st := &replyLost{Store: testkit.Store(t, testkit.SQLite)}
	cfg := testkit.NewWorkflow().Set("board", "{prefix: DRV}").Prompt("Work on {{ card.title }}.").Config(t, t.TempDir())
	var buf bytes.Buffer
	d, err := New(Options{Store: st, Config: cfg, Node: "n1", LogDir: t.TempDir(), Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []routeReq
	for i := range 3 {
		c, err := st.CreateCard(ctx, "DRV", board.Card{Title: fmt.Sprintf("card %d", i), State: "ready"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		claimed, run := claimWithRun(t, st.Store, c)
		reqs = append(reqs, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run,
			cls: policy.Classification{Kind: policy.KindInterrupted, Message: "drover stopped mid-run", Source: "recovery"}})
	}
	if err := d.routes.routeAll(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	if !st.lost {
		t.Fatal("the batch never went through the lossy store")
	}
	logged := map[string]int{}
	for _, rec := range runEnds(buf.Bytes()) {
		logged[fmt.Sprint(rec["run_id"])]++
	}
	for _, q := range reqs {
		r, err := st.GetRun(ctx, q.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != board.OutcomeInterrupted {
			t.Errorf("run %s: outcome %q, want interrupted", r.ID, r.Outcome)
		}
		if logged[q.run.ID] != 1 {
			t.Errorf("run %s: %d \"run finished\" lines, want 1", q.run.ID, logged[q.run.ID])
		}
	}
}

// readLost fails its first GetCard as a store that went away, after
// another node routed the run meanwhile (race runs then).
type readLost struct {
	store.Store
	race func()
	done bool
}

func (s *readLost) GetCard(ctx context.Context, ref string) (board.Card, error) {
	if !s.done {
		s.done = true
		s.race()
		return board.Card{}, fmt.Errorf("read: connection refused: %w", store.ErrUnavailable)
	}
	return s.Store.GetCard(ctx, ref)
}

// A routing whose read failed wrote nothing: when it finds the run routed
// by another node meanwhile, it logs no end of its own (the other node's
// routing did).
func TestARoutingWhoseReadFailedLogsNoEndOfItsOwn(t *testing.T) {
	ctx := context.Background()
	base := testkit.Store(t, testkit.SQLite)
	st := &readLost{Store: base}
	cfg := testkit.NewWorkflow().Set("board", "{prefix: DRV}").Prompt("Work on {{ card.title }}.").Config(t, t.TempDir())
	var buf bytes.Buffer
	d, err := New(Options{Store: st, Config: cfg, Node: "n1", LogDir: t.TempDir(), Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c, err := base.CreateCard(ctx, "DRV", board.Card{Title: "raced", State: "ready"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	claimed, run := claimWithRun(t, base, c)
	st.race = func() {
		// n2 took the claim back and routed the run as interrupted.
		cur, err := base.GetCard(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		next := cur
		next.Claim, next.State = nil, "ready"
		done := run
		fin := time.Now().UTC()
		done.Outcome, done.Kind, done.Decision, done.FinishedAt = board.OutcomeInterrupted, "interrupted", "recovered by n2", &fin
		if err := base.Apply(ctx, store.Change{Card: &next, ClaimGuard: cur.Claim, Run: &done, RunMustBeOpen: true}); err != nil {
			t.Fatal(err)
		}
	}
	res := &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 1}}
	cls := policy.Classification{Kind: policy.KindAgentFailed, Message: "tests failed", Source: "test"}
	if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: cls, res: res}); err != nil {
		t.Fatal(err)
	}
	if !st.done {
		t.Fatal("the read never failed")
	}
	if len(runEnds(buf.Bytes())) > 0 {
		t.Errorf("n1 logged an end for a run n2 routed:\n%s", buf.String())
	}
	r, err := base.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != "recovered by n2" {
		t.Errorf("the run's decision is %q; n2's routing should stand", r.Decision)
	}
}

// claimWithRun claims c for n1 and opens its attempt 1, as claimAndStart
// does, and returns the card as claimed and the open run.
func claimWithRun(t *testing.T, st store.Store, c board.Card) (board.Card, board.Run) {
	t.Helper()
	now := time.Now().UTC()
	claimed := c
	claimed.Claim = &board.Claim{Owner: "n1", Epoch: c.Version + 1, LeaseUntil: now.Add(time.Minute)}
	claimed.State = "in_progress"
	run := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: claimed.Claim.Epoch, Node: "n1", Agent: "sim", ClaimedAt: now}
	if err := st.Apply(context.Background(), store.Change{Card: &claimed, NewRun: &run}); err != nil {
		t.Fatal(err)
	}
	return claimed, run
}

// runEnds are the "run finished" records of a JSON log, in order.
func runEnds(log []byte) []map[string]any {
	var ends []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(log), []byte("\n")) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil && strings.HasPrefix(fmt.Sprint(rec["msg"]), "run finished") {
			ends = append(ends, rec)
		}
	}
	return ends
}
