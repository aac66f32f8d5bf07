package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestGenerateEvents(t *testing.T) {
	for _, be := range testkit.Backends {
		t.Run(string(be), func(t *testing.T) {
			s := testkit.Store(t, be)
			ctx := context.Background()
			to := time.Now().Truncate(time.Millisecond)
			from := to.Add(-1000 * time.Second)
			if err := s.GenerateEvents(ctx, 1000, from, to, []string{"c1", "c2"}); err != nil {
				t.Fatal(err)
			}
			evs, err := s.ListEvents(ctx, store.EventFilter{})
			if err != nil || len(evs) != 1000 {
				t.Fatalf("%d events, %v", len(evs), err)
			}
			if evs[0].CardID != "c1" || evs[1].CardID != "c2" || !evs[0].At.Equal(from) || evs[999].At.After(to) || !evs[999].At.After(from.Add(990*time.Second)) {
				t.Errorf("first %+v, second %+v, last %+v", evs[0], evs[1], evs[999])
			}
		})
	}
}
