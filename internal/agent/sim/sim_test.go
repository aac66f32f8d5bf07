package sim

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

// Every kind the sim can play classifies back to that kind through the same
// classifier the dispatcher uses.
func TestEveryKindRoundTrips(t *testing.T) {
	kinds := append([]policy.Kind{policy.KindSucceeded}, policy.Kinds...)
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) {
			spec, _ := json.Marshal(map[string]any{"sim": []string{string(k)}, "sim_delay": "1ms"})
			inv := agent.Invocation{Card: board.Card{Identifier: "DRV-1", Title: "t", Spec: spec},
				Run: board.Run{ID: "r1", Attempt: 1}, LogPath: filepath.Join(t.TempDir(), "r1.log")}
			res, err := New().Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			got := policy.Classify(res.Signals, nil)
			if res.Forced != nil {
				got = *res.Forced
			}
			if got.Kind != k {
				t.Fatalf("sim played %s, classified as %s (%s: %s)", k, got.Kind, got.Source, got.Message)
			}
			if k == policy.KindRateLimited || k == policy.KindUsageLimited {
				if got.RetryAfter <= 0 && got.RetryAt.IsZero() {
					t.Fatalf("%s without a retry time: %+v", k, got)
				}
			}
		})
	}
}

func TestScriptAdvancesAndRepeatsLast(t *testing.T) {
	s := Spec{Sim: []string{"network", "agent_failed", "succeeded"}}
	want := []policy.Kind{"network", "agent_failed", "succeeded", "succeeded"}
	for i, w := range want {
		if got := s.KindFor(i + 1); got != w {
			t.Fatalf("attempt %d plays %s, want %s", i+1, got, w)
		}
	}
	if _, err := ParseSpec([]byte(`{"sim":["bogus"]}`)); err == nil {
		t.Fatal("an unknown kind in spec.sim must be refused")
	}
	_ = time.Second
}
