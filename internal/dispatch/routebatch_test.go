package dispatch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// A batch reports a store's failure over a lost race, whichever came first.
func TestKeepFirstPrefersARealError(t *testing.T) {
	conflict := fmt.Errorf("routing run r1: still conflicting after 51 tries: %w", store.ErrConflict)
	down := errors.New("store unreachable")
	for _, c := range []struct {
		first, err, want error
	}{
		{nil, nil, nil},
		{nil, down, down},
		{down, nil, down},
		{conflict, down, down},
		{down, conflict, down},
		{conflict, nil, conflict},
		{down, errors.New("later"), down},
	} {
		if got := keepFirst(c.first, c.err); got != c.want {
			t.Errorf("keepFirst(%v, %v) = %v, want %v", c.first, c.err, got, c.want)
		}
	}
}

// A counted failure with a fingerprint of its own may complete a hold, so
// it is routed alone, after the batch; an interruption goes in the batch.
func TestAloneIsWhatMayCompleteAHold(t *testing.T) {
	run := board.Run{ID: "r1"}
	interrupted := routeReq{run: run, cls: policy.Classification{Kind: policy.KindInterrupted, Message: "drover stopped mid-run"}, recovering: true}
	failed := routeReq{run: run, cls: policy.Classification{Kind: policy.KindUnknown, Message: "the workspace of tenant 4821 is frozen pending review"}, recovering: true}
	if alone(interrupted, routeFacts{stored: run}) {
		t.Error("an interrupted recovery was routed alone")
	}
	if !alone(failed, routeFacts{stored: run}) {
		t.Error("a counted unknown failure recovered from a log went in the batch")
	}
}
