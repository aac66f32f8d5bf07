package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// A provider_unavailable give-up is told about an outage exactly when the
// profile's breaker is open or probing for provider_unavailable.
func TestOutageReadsTheProfilesBreaker(t *testing.T) {
	w := newWorld(t, 3)
	d := w.dispatcher("n1")
	ctx := context.Background()
	now := time.Now()
	version := int64(0)
	set := func(st policy.BreakerState) {
		t.Helper()
		if err := w.st.Apply(ctx, store.Change{AgentState: agentState("sim", st, version, now)}); err != nil {
			t.Fatal(err)
		}
		version++
	}
	outageNow := func() bool {
		t.Helper()
		bs, err := readBreakers(ctx, d.o.Store)
		if err != nil {
			t.Fatal(err)
		}
		return outage(bs, "sim")
	}
	if outageNow() {
		t.Error("no breaker row, yet an outage")
	}
	cases := []struct {
		st   policy.BreakerState
		want bool
	}{
		{policy.BreakerState{State: policy.BreakerOpen, Kind: policy.KindProviderUnavailable, Since: &now, Until: &now}, true},
		{policy.BreakerState{State: policy.BreakerHalfOpen, Kind: policy.KindProviderUnavailable, Since: &now}, true},
		{policy.BreakerState{State: policy.BreakerOpen, Kind: policy.KindRateLimited, Since: &now, Until: &now}, false},
		{policy.BreakerState{State: policy.BreakerClosed}, false},
	}
	for _, c := range cases {
		set(c.st)
		if got := outageNow(); got != c.want {
			t.Errorf("breaker %s for %s: outage %v, want %v", c.st.State, c.st.Kind, got, c.want)
		}
	}
}
