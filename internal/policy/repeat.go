package policy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// The same failure again on one card, with nothing changed, blocks early.
// Before a retry, ask what fact could be different on the next attempt: a
// counted failure (unknown included) is not healed by time, so when
// RepeatCap attempts in a row end with one fingerprint, ran on the same
// basis (the card's fields, the profile's config, the workspace setup, the
// verify step, the prompt: board.Run.Basis) and no human acted on the card
// between them (an edit, a comment, an answer, a move), the next attempt
// would have nothing the last did not. The card is blocked saying so,
// instead of spending the rest of max_attempts on the same failure.

// RepeatOn reports whether the repeat cap is enabled.
func (c Config) RepeatOn() bool { return c.RepeatCap > 0 }

// Repeats is how many attempts in a row, ending with the last of history
// (the finishing run, its Fingerprint set), failed with that run's
// fingerprint on the same basis with no change between them. Other runs
// that did not count (deferred, interrupted, held, a network retry) are
// passed over: they neither change anything nor repeat the failure; a
// success or a question ends the streak. changes are the times a human
// acted on the card. A failure without error text never repeats: an exit
// code alone says too little about what failed.
//
// next, when set, is the basis the next attempt would run on: a card, a
// profile or a prompt changed since the finishing run was claimed gives
// the next attempt something new, as does a change after that claim (a
// comment written while it ran), and the streak is the finishing run alone.
func Repeats(history []board.Run, changes []time.Time, next map[string]string) int {
	n := len(history)
	if n == 0 || !Informative(history[n-1].Fingerprint) {
		return 0
	}
	cur := history[n-1]
	if changedBetween(changes, cur.ClaimedAt, farFuture) || next != nil && len(cur.Basis) > 0 && !sameBasis(cur.Basis, next) {
		return 1
	}
	count, later := 1, cur
	for i := n - 2; i >= 0; i-- {
		r := history[i]
		if r.Outcome == board.OutcomeSucceeded || r.Outcome == board.OutcomeParked {
			break // the work went somewhere in between
		}
		if !r.Counted {
			continue
		}
		if r.Fingerprint != cur.Fingerprint || !sameBasis(r.Basis, cur.Basis) || changedBetween(changes, r.ClaimedAt, later.ClaimedAt) {
			break
		}
		count++
		later = r
	}
	return count
}

var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func sameBasis(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// changedBetween: a change after the earlier attempt was claimed and
// before (or as) the later one was.
func changedBetween(changes []time.Time, after, upTo time.Time) bool {
	for _, c := range changes {
		if c.After(after) && !c.After(upTo) {
			return true
		}
	}
	return false
}

// BasisDiff names the parts of basis now that differ from last's ("card",
// "profile", …), sorted; nil when they are the same.
func BasisDiff(last, now map[string]string) []string {
	var out []string
	for k, v := range now {
		if last[k] != v {
			out = append(out, k)
		}
	}
	for k := range last {
		if _, ok := now[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// basisNames are the words for the parts of a run's basis.
var basisNames = map[string]string{
	"card": "the card's title, body, spec or labels", "profile": "the agent profile's config",
	"setup": "the workspace setup (hooks)", "verify": "the verify step", "prompt": "the prompt template",
}

// DescribeBasis is parts (from BasisDiff) in words.
func DescribeBasis(parts []string) string {
	words := make([]string, len(parts))
	for i, p := range parts {
		words[i] = nonEmpty(basisNames[p], p)
	}
	return strings.Join(words, "; ")
}

// repeatBlock blocks the card after its n-th identical failure in a row.
func (x *decider) repeatBlock(d Decision, n int) Decision {
	first := x.cur.Attempt - n + 1
	if x.cur.Attempt == 0 {
		first = 0
	}
	runs := x.run()
	if first > 0 {
		runs = fmt.Sprintf("attempts %d–%d", first, x.cur.Attempt)
	}
	msg := fmt.Sprintf("the same failure %d times in a row with nothing changed between the attempts (%s, policy.repeat_cap %d): %s",
		n, runs, x.in.Config.RepeatCap, what(x.k, x.msg))
	d = x.block(d, KindRepeatedFailure, msg, fmt.Sprintf("%s failed (%s) the same way as the %d attempts before it, with nothing changed", x.run(), x.k, n-1))
	d.BlockReason.How = fmt.Sprintf("change what the next attempt gets: the card (drover card edit %s, or a comment with what to do differently), the agent profile's config, or what the failure points at; then drover card resume %s", x.id, x.id)
	return d
}
