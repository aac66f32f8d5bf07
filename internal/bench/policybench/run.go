package policybench

import (
	"context"
	"fmt"
)

// DefaultSlots is drover's agent slots in the benchmark: fewer than the
// fleet scenarios' cards, as a fleet's slots are; --slots 50 starts every
// card before any failure is seen.
const DefaultSlots = 10

// Options shape a benchmark run.
type Options struct {
	PriceUSD float64 // per agent session; 0: DefaultPriceUSD
	Seed     uint64  // the jitter of drover's backoff
	// Slots is drover's dispatch.max_concurrent (0: DefaultSlots). The
	// peers' models couple no cards, so their figures do not depend on it.
	Slots int
	// Drover, when set, replaces drover's row with this peer's model (the
	// relations' test: a benchmark that cannot tell policies apart fails).
	Drover *Peer
}

// Run plays every scenario through drover and every peer that plays it.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.PriceUSD == 0 {
		o.PriceUSD = DefaultPriceUSD
	}
	if o.Slots == 0 {
		o.Slots = DefaultSlots
	}
	var out []Result
	for _, s := range Scenarios {
		var d Result
		var err error
		if o.Drover != nil {
			d = PlayPeer(s, *o.Drover, o.PriceUSD)
			d.Policy = Drover
		} else if d, err = PlayDrover(ctx, s, o.PriceUSD, o.Seed, o.Slots); err != nil {
			return nil, fmt.Errorf("policy bench: %s: %w", s.Name, err)
		}
		out = append(out, d)
		for _, p := range Peers {
			if p.Plays == nil || p.Plays(s) {
				out = append(out, PlayPeer(s, p, o.PriceUSD))
			}
		}
	}
	return out, nil
}
