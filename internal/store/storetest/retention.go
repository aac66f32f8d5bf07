package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// testRetention: pruning takes old finished runs, old events and settled
// old notifications in bounded batches, and never an open run, the latest
// run of a card or a pending notification.
func testRetention(t *testing.T, s store.Store) {
	p, ok := s.(store.Pruner)
	if !ok {
		t.Skip("this store does not prune")
	}
	now := time.Now().Truncate(time.Millisecond)
	old := now.Add(-100 * 24 * time.Hour)
	cutoff := now.Add(-24 * time.Hour)
	// Events come in time order, as they do in life (see PruneEvents).
	var evs []board.Event
	for i := 0; i < 5; i++ {
		evs = append(evs, board.Event{At: old, Type: "old", Reason: fmt.Sprint(i)})
	}
	must(t, s.Apply(ctx, store.Change{Events: evs}))
	a := mkCard(t, s, "a", "review")
	b := mkCard(t, s, "b", "in_progress")
	fin := func(t time.Time) *time.Time { return &t }
	for _, r := range []board.Run{
		{ID: "a1", CardID: a.ID, Attempt: 1, RetryEpoch: 1, Outcome: board.OutcomeFailed, FinishedAt: fin(old), LogPath: "/logs/a1"},
		{ID: "a2", CardID: a.ID, Attempt: 2, RetryEpoch: 1, Outcome: board.OutcomeFailed, FinishedAt: fin(old)},
		{ID: "a3", CardID: a.ID, Attempt: 1, RetryEpoch: 2, Outcome: board.OutcomeSucceeded, FinishedAt: fin(old), LogPath: "/logs/a3"}, // latest of a
		{ID: "b1", CardID: b.ID, Attempt: 1, RetryEpoch: 1, Outcome: board.OutcomeFailed, FinishedAt: fin(now), LogPath: "/logs/b1"},    // recent
		{ID: "b2", CardID: b.ID, Attempt: 2, RetryEpoch: 1, Outcome: board.OutcomeFailed, FinishedAt: fin(old), LogPath: "/logs/b2"},
		{ID: "b3", CardID: b.ID, Attempt: 3, RetryEpoch: 1, ClaimedAt: old}, // open
	} {
		r := r
		must(t, s.Apply(ctx, store.Change{NewRun: &r}))
	}
	must(t, s.Apply(ctx, store.Change{Events: []board.Event{{At: now, CardID: a.ID, Type: "new"}}}))
	ob := func(key string, created time.Time) store.OutboxItem {
		return store.OutboxItem{Key: key, Channel: "webhook", Event: "blocked", Payload: json.RawMessage(`{}`), CreatedAt: created, NextAt: created}
	}
	must(t, s.Apply(ctx, store.Change{Outbox: []store.OutboxItem{ob("delivered", old), ob("dead", old), ob("pending", old), ob("recent", now)}}))
	items, _ := s.ListOutbox(ctx, store.OutboxFilter{})
	for _, it := range items {
		switch it.Key {
		case "delivered", "recent":
			must(t, s.MarkOutbox(ctx, it.ID, store.OutboxResult{Delivered: true, At: now}))
		case "dead":
			must(t, s.MarkOutbox(ctx, it.ID, store.OutboxResult{Dead: true, At: now, Error: "gone"}))
		}
	}

	// Agents' comments go with the events; people's stay.
	must(t, s.Apply(ctx, store.Change{Comments: []board.Comment{
		{CardID: a.ID, Author: "agent:claude", Body: "old note 1", At: old},
		{CardID: b.ID, Author: "agent:codex", Body: "old note 2", At: old.Add(time.Minute)},
		{CardID: a.ID, Author: "operator", Body: "old human comment", At: old},
		{CardID: a.ID, Author: "tracker:github:alice", Body: "old answer", At: old},
		{CardID: a.ID, Author: "agent:claude", Body: "recent note", At: now},
	}}))

	cut := store.Cutoffs{Events: cutoff, Runs: cutoff, Logs: cutoff}
	got, err := p.CountPrunable(ctx, cut)
	must(t, err)
	// Runs a1, a2, b2; logs of a1, b2; five old events (the cards' "created"
	// events are recent); the delivered and the dead notification; the two
	// old agent comments.
	if want := (store.Prunable{Events: 5, Outbox: 2, Comments: 2, Runs: 3, Logs: 2}); got != want {
		t.Errorf("CountPrunable = %+v, want %+v", got, want)
	}

	withLog, err := p.OldRuns(ctx, cutoff, true, 10)
	must(t, err)
	if ids := oldRunIDs(withLog); fmt.Sprint(ids) != "[a1 b2]" || withLog[0].LogPath == "" {
		t.Errorf("OldRuns with a log = %+v, want a1 and b2 with their paths", withLog)
	}
	must(t, p.ForgetLogs(ctx, []string{"a1"}))
	if r, _ := s.GetRun(ctx, "a1"); r.LogPath != "" {
		t.Errorf("ForgetLogs left log path %q", r.LogPath)
	}
	runs, err := p.OldRuns(ctx, cutoff, false, 2)
	must(t, err)
	if len(runs) != 2 {
		t.Fatalf("OldRuns limit 2 returned %d", len(runs))
	}
	all, _ := p.OldRuns(ctx, cutoff, false, 10)
	if ids := oldRunIDs(all); fmt.Sprint(ids) != "[a1 a2 b2]" {
		t.Fatalf("OldRuns = %v, want a1 a2 b2 (never a3, the latest of a; never b3, open; never b1, recent)", ids)
	}
	// Asked to delete every run, it deletes only the prunable ones.
	n, err := p.DeleteRuns(ctx, []string{"a1", "a2", "a3", "b1", "b2", "b3"}, cutoff)
	must(t, err)
	left, _ := s.ListRuns(ctx, store.RunFilter{})
	leftIDs := sortedBy(left, func(r board.Run) string { return r.ID })
	if n != 3 || fmt.Sprint(leftIDs) != "[a3 b1 b3]" {
		t.Errorf("DeleteRuns deleted %d, left %v; want 3, left a3 b1 b3", n, leftIDs)
	}

	// Events go in batches, oldest first; the recent ones stay.
	var batches []int
	for {
		n, err := p.PruneEvents(ctx, cutoff, 3)
		must(t, err)
		if n == 0 {
			break
		}
		batches = append(batches, n)
	}
	if fmt.Sprint(batches) != "[3 2]" {
		t.Errorf("PruneEvents batches = %v, want [3 2]", batches)
	}
	kept, _ := s.ListEvents(ctx, store.EventFilter{})
	for _, e := range kept {
		if e.Type == "old" {
			t.Errorf("old event %+v survived", e)
		}
	}
	if len(kept) != 3 { // two "created" and one "new"
		t.Errorf("%d events kept, want 3: %+v", len(kept), kept)
	}

	n, err = p.PruneOutbox(ctx, cutoff, 10)
	must(t, err)
	items, _ = s.ListOutbox(ctx, store.OutboxFilter{})
	keys := sortedBy(items, func(it store.OutboxItem) string { return it.Key })
	if n != 2 || fmt.Sprint(keys) != "[pending recent]" {
		t.Errorf("PruneOutbox deleted %d, left %v; want 2, left pending and recent", n, keys)
	}

	// A window of two at a time: the first holds both old agent notes, the
	// next the people's, the last the recent note, which ends it.
	var cbatches []int
	for after, done := "", false; !done; {
		var n int
		n, after, done, err = p.PruneAgentComments(ctx, cutoff, after, 2)
		must(t, err)
		cbatches = append(cbatches, n)
		if len(cbatches) > 5 {
			t.Fatal("PruneAgentComments never says it is done")
		}
	}
	if fmt.Sprint(cbatches) != "[2 0 0]" {
		t.Errorf("PruneAgentComments batches = %v, want [2 0 0]", cbatches)
	}
	var bodies []string
	for _, id := range []string{a.ID, b.ID} {
		cs, err := s.ListComments(ctx, id)
		must(t, err)
		for _, c := range cs {
			bodies = append(bodies, c.Body)
		}
	}
	if slices.Sort(bodies); fmt.Sprint(bodies) != "[old answer old human comment recent note]" {
		t.Errorf("comments kept %q, want people's and the recent agent note", bodies)
	}

	if r, err := p.LastGC(ctx); err != nil || r != nil {
		t.Fatalf("LastGC before any = %v, %v", r, err)
	}
	rep := store.GCReport{At: now.UTC(), Events: 5, Runs: 3, Logs: 2, LogBytes: 1234, DurationMS: 7}
	must(t, p.RecordGC(ctx, rep))
	rep.Events = 6
	must(t, p.RecordGC(ctx, rep))
	if r, err := p.LastGC(ctx); err != nil || r == nil || *r != rep {
		t.Errorf("LastGC = %+v, %v; want %+v", r, err, rep)
	}
}

func oldRunIDs(rs []store.OldRun) []string {
	return sortedBy(rs, func(r store.OldRun) string { return r.ID })
}

// sortedBy is key of each of xs, sorted.
func sortedBy[T any](xs []T, key func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, key(x))
	}
	sort.Strings(out)
	return out
}
