package retention_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/retention"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var ctx = context.Background()

// A store with two cards: card a has an old failed run (log on disk) and
// its latest run, old too (log on disk); card b runs now. 600 old events.
func seed(t *testing.T) (store.Store, store.Pruner, map[string]string) {
	s := testkit.Store(t, testkit.SQLite)
	dir := t.TempDir()
	old := time.Now().Add(-200 * config.Day)
	var evs []board.Event
	for i := 0; i < 600; i++ {
		evs = append(evs, board.Event{At: old, Type: "old"})
	}
	if err := s.Apply(ctx, store.Change{Events: evs}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.CreateCard(ctx, "DRV", board.Card{Title: "a", State: "review", Spec: json.RawMessage(`{}`)}, "op")
	b, _ := s.CreateCard(ctx, "DRV", board.Card{Title: "b", State: "in_progress", Spec: json.RawMessage(`{}`)}, "op")
	logs := map[string]string{}
	for _, r := range []board.Run{
		{ID: "a1", CardID: a.ID, Attempt: 1, RetryEpoch: 1, Outcome: board.OutcomeFailed, FinishedAt: &old},
		{ID: "a2", CardID: a.ID, Attempt: 2, RetryEpoch: 1, Outcome: board.OutcomeSucceeded, FinishedAt: &old},
		{ID: "b1", CardID: b.ID, Attempt: 1, RetryEpoch: 1},
	} {
		r := r
		r.LogPath = filepath.Join(dir, r.ID+".log")
		logs[r.ID] = r.LogPath
		if err := os.WriteFile(r.LogPath, make([]byte, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, store.Change{NewRun: &r}); err != nil {
			t.Fatal(err)
		}
	}
	return s, s, logs
}

func defaults() config.Retention {
	return config.Retention{Events: config.DefaultRetainEvents, Runs: config.DefaultRetainRuns, Logs: config.DefaultRetainLogs}
}

func TestCollectPrunesWhatRetentionAllowsAndNothingElse(t *testing.T) {
	s, p, logs := seed(t)
	dry, err := retention.Collect(ctx, p, defaults(), time.Now(), retention.Options{DryRun: true, Batch: 100, Pause: -1})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Events != 600 || dry.Runs != 1 || dry.Logs != 1 || dry.LogBytes != 1000 || !dry.DryRun {
		t.Errorf("dry run = %+v, want 600 events, 1 run, 1 log of 1000 bytes", dry)
	}
	if evs, _ := s.ListEvents(ctx, store.EventFilter{}); len(evs) != 602 {
		t.Fatalf("a dry run deleted events: %d left", len(evs))
	}
	rep, err := retention.Collect(ctx, p, defaults(), time.Now(), retention.Options{Batch: 100, Pause: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 600 || rep.Runs != 1 || rep.Logs != 1 || rep.LogBytes != 1000 || rep.DryRun {
		t.Errorf("collection = %+v, want 600 events, 1 run, 1 log of 1000 bytes", rep)
	}
	if _, err := os.Stat(logs["a1"]); !os.IsNotExist(err) {
		t.Errorf("the old run's log is still there (%v)", err)
	}
	for _, id := range []string{"a2", "b1"} { // latest of a; open
		if _, err := os.Stat(logs[id]); err != nil {
			t.Errorf("log of %s removed: %v", id, err)
		}
		if _, err := s.GetRun(ctx, id); err != nil {
			t.Errorf("run %s removed: %v", id, err)
		}
	}
	if evs, _ := s.ListEvents(ctx, store.EventFilter{}); len(evs) != 2 {
		t.Errorf("%d events left, want the two cards' created events", len(evs))
	}
	// Forever keeps everything.
	again, _ := retention.Collect(ctx, p, config.Retention{}, time.Now().Add(1000*config.Day), retention.Options{Pause: -1})
	if again.Events+again.Runs+again.Logs+again.Outbox != 0 {
		t.Errorf("retention forever pruned %+v", again)
	}
}

func TestWorkerCollectsOnTheLeaderOnlyAndRecords(t *testing.T) {
	_, p, _ := seed(t)
	lead := false
	w := &retention.Worker{Store: p, Config: defaults, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Lead:    func(context.Context) (bool, error) { return lead, nil },
		Options: retention.Options{Pause: -1}}
	w.Once(ctx)
	if r, _ := p.LastGC(ctx); r != nil {
		t.Fatalf("a follower collected: %+v", r)
	}
	lead = true
	w.Once(ctx)
	r, err := p.LastGC(ctx)
	if err != nil || r == nil || r.Events != 600 || r.Runs != 1 || r.LogBytes != 1000 {
		t.Fatalf("recorded report %+v, %v", r, err)
	}
}

// Agents' comments older than retention.events go with the events, over
// many windows; people's comments and recent agent comments stay.
func TestCollectPrunesOldAgentComments(t *testing.T) {
	s, p, _ := seed(t)
	cs, _ := s.ListCards(ctx, store.CardFilter{})
	old := time.Now().Add(-200 * config.Day)
	var comments []board.Comment
	for i := range 250 {
		comments = append(comments, board.Comment{CardID: cs[i%2].ID, Author: "agent:sim", Body: "chatter", At: old})
		if i%50 == 0 {
			comments = append(comments, board.Comment{CardID: cs[0].ID, Author: "operator", Body: "a person's note", At: old})
		}
	}
	comments = append(comments, board.Comment{CardID: cs[1].ID, Author: "agent:sim", Body: "today's note", At: time.Now()})
	if err := s.Apply(ctx, store.Change{Comments: comments}); err != nil {
		t.Fatal(err)
	}
	dry, err := retention.Collect(ctx, p, defaults(), time.Now(), retention.Options{DryRun: true, Batch: 100, Pause: -1})
	if err != nil || dry.Comments != 250 {
		t.Fatalf("dry run = %+v, %v; want 250 agent comments", dry, err)
	}
	rep, err := retention.Collect(ctx, p, defaults(), time.Now(), retention.Options{Batch: 40, Pause: -1})
	if err != nil || rep.Comments != 250 {
		t.Fatalf("collection = %+v, %v; want 250 agent comments pruned", rep, err)
	}
	left := map[string]int{}
	for _, c := range cs {
		got, _ := s.ListComments(ctx, c.ID)
		for _, cm := range got {
			left[cm.Body]++
		}
	}
	if left["chatter"] != 0 || left["a person's note"] != 5 || left["today's note"] != 1 {
		t.Fatalf("comments left %v, want the people's 5 and today's note", left)
	}
}
