package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// Nodes: the processes sharing a store, their leadership and node names.

func testNodesAndLeader(t *testing.T, s store.Store) {
	now := time.Now().Truncate(time.Millisecond)
	// Written out of name order: ListNodes sorts by name.
	must(t, s.TouchNode(ctx, store.Node{Name: "n2", PID: 2, StartedAt: now, SeenAt: now}))
	must(t, s.TouchNode(ctx, store.Node{Name: "n1", PID: 1, StartedAt: now, SeenAt: now, Running: 2}))
	must(t, s.TouchNode(ctx, store.Node{Name: "n1", PID: 1, StartedAt: now, SeenAt: now.Add(time.Second), Running: 3}))
	ns, _ := s.ListNodes(ctx)
	if len(ns) != 2 || ns[0].Name != "n1" || ns[0].Running != 3 || !ns[0].SeenAt.Equal(now.Add(time.Second)) || ns[1].Name != "n2" {
		t.Fatalf("nodes = %+v", ns)
	}
	ok1, err := s.TryLead(ctx, "n1", 200*time.Millisecond)
	must(t, err)
	ok2, _ := s.TryLead(ctx, "n2", 200*time.Millisecond)
	if !ok1 || ok2 {
		t.Fatalf("leader: n1 %v n2 %v, want only n1", ok1, ok2)
	}
	time.Sleep(300 * time.Millisecond)
	ok2, _ = s.TryLead(ctx, "n2", time.Minute)
	ok1, _ = s.TryLead(ctx, "n1", time.Minute)
	if !ok2 || ok1 {
		t.Fatalf("after lapse: n2 %v n1 %v, want leadership to pass to n2", ok2, ok1)
	}
}

// A node name is held by one instance at a time: others are refused until
// its lease passes (a stale row never blocks) or they supersede an instance
// known dead; of several claiming a free name at once, exactly one wins.
func testNodeNameHeld(t *testing.T, s store.Store) {
	now := time.Now().Truncate(time.Millisecond)
	node := func(name, inst string, lease time.Duration) store.Node {
		return store.Node{Name: name, PID: 1, StartedAt: now, SeenAt: now, Instance: inst, LeaseUntil: now.Add(lease)}
	}
	must(t, s.TouchNode(ctx, node("n", "a", time.Minute)))
	if err := s.TouchNode(ctx, node("n", "b", time.Minute)); !errors.Is(err, store.ErrNodeHeld) {
		t.Fatalf("b claiming a's live name: err = %v, want ErrNodeHeld", err)
	}
	must(t, s.TouchNode(ctx, node("n", "a", time.Minute))) // a renews
	ns, _ := s.ListNodes(ctx)
	if len(ns) != 1 || ns[0].Instance != "a" || !ns[0].LeaseUntil.Equal(now.Add(time.Minute)) {
		t.Fatalf("nodes = %+v, want n held by a until %v", ns, now.Add(time.Minute))
	}
	b := node("n", "b", time.Minute)
	b.Supersedes = "x"
	if err := s.TouchNode(ctx, b); !errors.Is(err, store.ErrNodeHeld) {
		t.Fatalf("b superseding an instance that does not hold the name: err = %v, want ErrNodeHeld", err)
	}
	b.Supersedes = "a"
	must(t, s.TouchNode(ctx, b))
	if err := s.TouchNode(ctx, node("n", "a", time.Minute)); !errors.Is(err, store.ErrNodeHeld) {
		t.Fatalf("a renewing after b superseded it: err = %v, want ErrNodeHeld", err)
	}

	must(t, s.TouchNode(ctx, node("stale", "dead", -time.Second)))
	must(t, s.TouchNode(ctx, node("stale", "fresh", time.Minute)))
	must(t, s.TouchNode(ctx, store.Node{Name: "legacy", PID: 7, StartedAt: now, SeenAt: now})) // a row from before leases
	must(t, s.TouchNode(ctx, node("legacy", "fresh", time.Minute)))

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.TouchNode(ctx, node("race", fmt.Sprint("i", i), time.Minute))
		}()
	}
	wg.Wait()
	oneWins(t, "simultaneous claims of one name", errs, store.ErrNodeHeld)
}
