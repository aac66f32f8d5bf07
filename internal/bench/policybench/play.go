package policybench

import "time"

// DefaultPriceUSD is the default price of one agent session (a run that
// opened a session; a start refused before one costs nothing).
const DefaultPriceUSD = 0.50

// HumanDelay is how long a human takes to act on a card that asks for one
// after the fault cleared, unless the operator is at the keyboard then
// (Scenario.OperatorClears).
const HumanDelay = 15 * time.Minute

// Result is one scenario under one policy.
type Result struct {
	Scenario string  `json:"scenario"`
	Policy   string  `json:"policy"`
	Runs     int     `json:"runs"`
	CostUSD  float64 `json:"cost_usd"`
	// TimeToTruthS is when every card first showed a truthful state
	// (Scenario.Truth, or done); nil: some card never did within the horizon.
	TimeToTruthS         *float64 `json:"time_to_truth_s"`
	FinishedWithoutHuman int      `json:"finished_without_human"`
	HumanActions         int      `json:"human_actions"`
	sessions             int
}

// tally collects one policy's cards.
type tally struct {
	r     Result
	truth time.Duration // latest first-truth time so far
	never bool
}

// card adds one card: its first truthful moment (< 0: never), whether it
// finished with no human acting on it, and the human actions it took.
func (t *tally) card(firstTruth time.Duration, doneAlone bool, humans int) {
	if firstTruth < 0 {
		t.never = true
	}
	t.truth = max(t.truth, firstTruth)
	if doneAlone {
		t.r.FinishedWithoutHuman++
	}
	t.r.HumanActions += humans
}

func (t *tally) result(price float64) Result {
	r := t.r
	r.CostUSD = float64(r.sessions) * price
	if !t.never {
		s := t.truth.Seconds()
		r.TimeToTruthS = &s
	}
	return r
}

// humanAt is when a human acts on a card that asked for one at `at`.
func (s Scenario) humanAt(at time.Duration) time.Duration {
	at = max(at, s.ClearAt)
	if !s.OperatorClears {
		at += HumanDelay
	}
	return at
}

// PlayPeer plays s through a peer's model, card by card (no model couples
// cards: none documents a breaker or a hold across cards).
func PlayPeer(s Scenario, p Peer, price float64) Result {
	t := tally{r: Result{Scenario: s.Name, Policy: p.Name}}
	for c := 0; c < s.Cards; c++ {
		first, alone, humans := playCard(s, p, c, &t.r)
		t.card(first, alone, humans)
	}
	return t.result(price)
}

func playCard(s Scenario, p Peer, c int, r *Result) (first time.Duration, alone bool, humans int) {
	first = -1
	at, n, life := time.Duration(0), 1, 1
	for at <= s.Horizon {
		o := s.Attempt(c, life, at)
		r.Runs++
		if !o.PreSession {
			r.sessions++
		}
		if o.OK {
			if first < 0 {
				first = at
			}
			return first, humans == 0, humans
		}
		st := p.Next(o, n, at)
		if first < 0 && s.truthful(st.Class) {
			first = at
		}
		life++
		if !st.Stop {
			at, n = st.At, n+1
			continue
		}
		if s.ClearAt < 0 {
			break // the card itself must change: a human's fix, below
		}
		at, n = s.humanAt(at), 1
		humans++
	}
	if s.ClearAt < 0 {
		humans++ // the fix: the same one action under every policy
	}
	return first, false, humans
}
