package policybench

import (
	"fmt"
	"sort"
)

// Violation is one relation drover's row breaks against one peer's:
// "runs" (drover spent more), "finished" (drover finished fewer cards
// without a human), "truth" (drover showed the truth later, or never).
type Violation struct {
	Scenario, Peer, Relation string
	Drover, PeerValue        string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s vs %s: %s (drover %s, %s %s)", v.Scenario, v.Peer, v.Relation, v.Drover, v.Peer, v.PeerValue)
}

// Key names the violation without its figures.
func (v Violation) Key() string { return v.Scenario + "/" + v.Peer + "/" + v.Relation }

// Relations checks the relations on every scenario: drover spends
// no more runs than any modelled peer, finishes no fewer cards without a
// human, and shows the truth no later.
func Relations(rs []Result) []Violation {
	drover := map[string]Result{}
	for _, r := range rs {
		if r.Policy == Drover {
			drover[r.Scenario] = r
		}
	}
	var out []Violation
	for _, p := range rs {
		d, ok := drover[p.Scenario]
		if p.Policy == Drover || !ok {
			continue
		}
		add := func(rel, dv, pv string) {
			out = append(out, Violation{Scenario: p.Scenario, Peer: p.Policy, Relation: rel, Drover: dv, PeerValue: pv})
		}
		if d.Runs > p.Runs {
			add("runs", fmt.Sprint(d.Runs), fmt.Sprint(p.Runs))
		}
		if d.FinishedWithoutHuman < p.FinishedWithoutHuman {
			add("finished", fmt.Sprint(d.FinishedWithoutHuman), fmt.Sprint(p.FinishedWithoutHuman))
		}
		if later(d.TimeToTruthS, p.TimeToTruthS) {
			add("truth", truthText(d.TimeToTruthS), truthText(p.TimeToTruthS))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// later: a is after b (nil is never, after everything).
func later(a, b *float64) bool {
	switch {
	case a == nil:
		return b != nil
	case b == nil:
		return false
	}
	return *a > *b
}

func truthText(s *float64) string {
	if s == nil {
		return "never"
	}
	return fmt.Sprintf("%gs", *s)
}
