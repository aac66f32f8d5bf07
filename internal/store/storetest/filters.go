package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// The cases in this file give every filter field and order of the Store's
// list methods a data set in which ignoring the field, or sorting by
// another column, returns a different answer.

// testCardFilters: Claimed, LeaseExpiredBefore, DueBy, ScheduledAfter,
// Query (title and identifier), Limit and Offset.
func testCardFilters(t *testing.T, s store.Store) {
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	held := func(until time.Time) func(*board.Card) {
		return func(c *board.Card) { c.Claim = &board.Claim{Owner: "n1", Epoch: 1, LeaseUntil: until} }
	}
	free := mkCard(t, s, "free", "ready")
	mkCard(t, s, "held", "in_progress", held(future))
	lapsed := mkCard(t, s, "lapsed", "in_progress", held(past))
	mkCard(t, s, "retry", "ready", func(c *board.Card) { c.NextAttemptAt = &future })
	mkCard(t, s, "due", "ready", func(c *board.Card) { c.NextAttemptAt = &past })
	for _, tc := range []struct {
		name string
		f    store.CardFilter
		want string
	}{
		{"all", store.CardFilter{}, "[free held lapsed retry due]"},
		{"claimed", store.CardFilter{Claimed: store.Bool(true)}, "[held lapsed]"},
		{"unclaimed", store.CardFilter{Claimed: store.Bool(false)}, "[free retry due]"},
		{"lease expired", store.CardFilter{LeaseExpiredBefore: &now}, "[lapsed]"},
		{"due by", store.CardFilter{DueBy: &now}, "[free held lapsed due]"},
		{"scheduled after", store.CardFilter{ScheduledAfter: &now}, "[retry]"},
		{"unclaimed and due", store.CardFilter{Claimed: store.Bool(false), DueBy: &now}, "[free due]"},
		{"query title", store.CardFilter{Query: "LAPS"}, "[lapsed]"},
		{"query identifier", store.CardFilter{Query: "drv-2"}, "[held]"},
		{"page", store.CardFilter{Limit: 2, Offset: 1}, "[held lapsed]"},
		{"last page", store.CardFilter{Limit: 2, Offset: 4}, "[due]"},
		{"ids", store.CardFilter{IDs: []string{lapsed.ID, free.ID, "no-such-card"}}, "[free lapsed]"},
		{"ids and claimed", store.CardFilter{IDs: []string{lapsed.ID, free.ID}, Claimed: store.Bool(true)}, "[lapsed]"},
	} {
		got, err := s.ListCards(ctx, tc.f)
		must(t, err)
		if titles(got) != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, titles(got), tc.want)
		}
	}
}

// testRunFilters: CardID, RetryEpoch, Open, Node, Limit, Offset and Newest, and
// GetRun of an unknown id.
func testRunFilters(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready")
	b := mkCard(t, s, "b", "ready")
	t0 := time.Now().Add(-time.Hour)
	for i, r := range []board.Run{
		{CardID: a.ID, RetryEpoch: 1, Attempt: 1, Node: "n1", Outcome: board.OutcomeFailed},
		{CardID: a.ID, RetryEpoch: 1, Attempt: 2, Node: "n2"},
		{CardID: a.ID, RetryEpoch: 2, Attempt: 1, Node: "n1"},
		{CardID: b.ID, RetryEpoch: 1, Attempt: 1, Node: "n2", Outcome: board.OutcomeSucceeded},
	} {
		r.ID = fmt.Sprint("run-", i+1)
		r.ClaimedAt = t0.Add(time.Duration(i) * time.Minute)
		must(t, s.Apply(ctx, store.Change{NewRun: &r}))
	}
	one, two := 1, 2
	since := t0.Add(2 * time.Minute)
	for _, tc := range []struct {
		name string
		f    store.RunFilter
		want string
	}{
		{"all, oldest first", store.RunFilter{}, "[run-1 run-2 run-3 run-4]"},
		{"card", store.RunFilter{CardID: a.ID}, "[run-1 run-2 run-3]"},
		{"epoch", store.RunFilter{RetryEpoch: &one}, "[run-1 run-2 run-4]"},
		{"card and epoch", store.RunFilter{CardID: a.ID, RetryEpoch: &two}, "[run-3]"},
		{"cards", store.RunFilter{CardIDs: []string{b.ID, a.ID}}, "[run-1 run-2 run-3 run-4]"},
		{"cards, one", store.RunFilter{CardIDs: []string{b.ID, "no-such-card"}}, "[run-4]"},
		{"cards and open", store.RunFilter{CardIDs: []string{a.ID, b.ID}, Open: store.Bool(true)}, "[run-2 run-3]"},
		{"open", store.RunFilter{Open: store.Bool(true)}, "[run-2 run-3]"},
		{"finished", store.RunFilter{Open: store.Bool(false)}, "[run-1 run-4]"},
		{"node", store.RunFilter{Node: "n2"}, "[run-2 run-4]"},
		{"limit", store.RunFilter{Limit: 2}, "[run-1 run-2]"},
		{"newest", store.RunFilter{Newest: true}, "[run-4 run-3 run-2 run-1]"},
		{"newest, limit", store.RunFilter{Newest: true, Limit: 2}, "[run-4 run-3]"},
		{"newest, a page on", store.RunFilter{Newest: true, Limit: 2, Offset: 2}, "[run-2 run-1]"},
		{"newest, past the end", store.RunFilter{Newest: true, Limit: 2, Offset: 4}, "[]"},
		{"claimed since", store.RunFilter{ClaimedSince: &since}, "[run-3 run-4]"},
	} {
		runs, err := s.ListRuns(ctx, tc.f)
		must(t, err)
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		if fmt.Sprint(ids) != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, ids, tc.want)
		}
	}
	if _, err := s.GetRun(ctx, "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun of an unknown id: err = %v, want ErrNotFound", err)
	}
}

// testEventFilters: CardID, SinceSeq, Since, Limit and Newest.
func testEventFilters(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready") // event 1
	b := mkCard(t, s, "b", "ready") // event 2
	now := time.Now()
	must(t, s.Apply(ctx, store.Change{Events: []board.Event{
		{CardID: a.ID, Type: board.EvEdited, At: now.Add(-2 * time.Hour)}, // event 3
		{CardID: b.ID, Type: board.EvEdited, At: now.Add(-time.Hour)},     // event 4
	}}))
	all, err := s.ListEvents(ctx, store.EventFilter{})
	must(t, err)
	if len(all) != 4 {
		t.Fatalf("%d events, want 4", len(all))
	}
	// Name each event by its place in the log, 1 to 4.
	num := map[int64]int{}
	for i, e := range all {
		num[e.Seq] = i + 1
	}
	hourAndAHalf := now.Add(-90 * time.Minute)
	for _, tc := range []struct {
		name string
		f    store.EventFilter
		want string
	}{
		{"card", store.EventFilter{CardID: a.ID}, "[1 3]"},
		{"after a sequence number", store.EventFilter{SinceSeq: all[1].Seq}, "[3 4]"},
		{"since a time", store.EventFilter{Since: &hourAndAHalf}, "[1 2 4]"},
		{"limit, oldest first", store.EventFilter{Limit: 2}, "[1 2]"},
		{"newest, still oldest first", store.EventFilter{Limit: 2, Newest: true}, "[3 4]"},
		{"card, newest", store.EventFilter{CardID: a.ID, Limit: 1, Newest: true}, "[3]"},
	} {
		evs, err := s.ListEvents(ctx, tc.f)
		must(t, err)
		var got []int
		for _, e := range evs {
			got = append(got, num[e.Seq])
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s: events %v, want %v", tc.name, got, tc.want)
		}
	}
}

// testOutboxFilters: ListOutbox by CardID, Pending and Limit (oldest
// first); DueOutbox by time and limit, soonest first; a dead item.
func testOutboxFilters(t *testing.T, s store.Store) {
	a := mkCard(t, s, "a", "ready")
	b := mkCard(t, s, "b", "ready")
	now := time.Now()
	ago := func(m int) time.Time { return now.Add(-time.Duration(m) * time.Minute) }
	item := func(id, card string, created, next time.Time) store.OutboxItem {
		return store.OutboxItem{ID: id, Key: id, Channel: "webhook", Event: "x", CardID: card,
			Payload: json.RawMessage(`{}`), CreatedAt: created, NextAt: next}
	}
	must(t, s.Apply(ctx, store.Change{Outbox: []store.OutboxItem{
		item("o1", a.ID, ago(50), ago(50)),
		item("o2", a.ID, ago(40), ago(40)),
		item("o3", b.ID, ago(30), now.Add(time.Hour)),
		item("o4", b.ID, ago(20), ago(20)),
		item("o5", a.ID, ago(10), ago(60)), // created last, due first
	}}))
	must(t, s.MarkOutbox(ctx, "o2", store.OutboxResult{Delivered: true, At: now}))
	must(t, s.MarkOutbox(ctx, "o4", store.OutboxResult{At: now, Error: "410 gone", Dead: true}))
	ids := func(items []store.OutboxItem) string {
		var out []string
		for _, o := range items {
			out = append(out, o.ID)
		}
		return fmt.Sprint(out)
	}
	for _, tc := range []struct {
		name string
		f    store.OutboxFilter
		want string
	}{
		{"all, oldest first", store.OutboxFilter{}, "[o1 o2 o3 o4 o5]"},
		{"card", store.OutboxFilter{CardID: a.ID}, "[o1 o2 o5]"},
		{"pending", store.OutboxFilter{Pending: store.Bool(true)}, "[o1 o3 o5]"},
		{"settled", store.OutboxFilter{Pending: store.Bool(false)}, "[o2 o4]"},
		{"card, settled", store.OutboxFilter{CardID: b.ID, Pending: store.Bool(false)}, "[o4]"},
		{"limit", store.OutboxFilter{Limit: 2}, "[o1 o2]"},
	} {
		got, err := s.ListOutbox(ctx, tc.f)
		must(t, err)
		if ids(got) != tc.want {
			t.Errorf("ListOutbox %s: %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		now   time.Time
		limit int
		want  string
	}{
		{"now", now, 10, "[o5 o1]"},
		{"in two hours", now.Add(2 * time.Hour), 10, "[o5 o1 o3]"},
		{"limit", now, 1, "[o5]"},
	} {
		got, err := s.DueOutbox(ctx, tc.now, tc.limit)
		must(t, err)
		if ids(got) != tc.want {
			t.Errorf("DueOutbox %s: %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	dead, _ := s.ListOutbox(ctx, store.OutboxFilter{CardID: b.ID, Pending: store.Bool(false)})
	if len(dead) != 1 || !dead[0].Dead || dead[0].DeliveredAt != nil || dead[0].LastError != "410 gone" || dead[0].Attempts != 1 {
		t.Errorf("dead item = %+v", dead)
	}
}

// testPing: an open store answers Ping and names its backend; a closed one
// is unavailable.
func testPing(t *testing.T, s store.Store) {
	must(t, s.Ping(ctx))
	if b := s.Backend(); b != "sqlite" && b != "postgres" {
		t.Errorf("Backend() = %q, want sqlite or postgres", b)
	}
	must(t, s.Close())
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping after Close: err = %v, want ErrUnavailable", err)
	}
}
