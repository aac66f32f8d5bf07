package dispatch

import (
	"context"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Fresh says, for a card waiting on a retry, what its next attempt has
// that its last did not: before retrying, ask what fact could be
// different. Nothing new means the same failure again counts toward the
// repeat cap.
type Fresh struct {
	LastAttempt int      `json:"last_attempt"`
	Changed     []string `json:"changed"` // in words; empty when nothing is new
	// Repeats is how many attempts in a row ended with the last one's
	// failure, nothing changed between them; RepeatCap is policy.repeat_cap
	// (-1 off).
	Repeats   int    `json:"repeats"`
	RepeatCap int    `json:"repeat_cap"`
	Text      string `json:"text"`
}

// freshness is Fresh for c on profile from its epoch's runs (nil when the
// card is not waiting on a retry after a failure).
func freshness(ctx context.Context, st store.Store, cfg *config.Config, c board.Card, profile string, runs []board.Run) (*Fresh, error) {
	if c.Claim != nil || c.NextAttemptAt == nil || len(runs) == 0 || cfg.Board.RoleOf(c.State) != board.RoleEligible {
		return nil, nil
	}
	var last *board.Run
	for i := range runs {
		if !runs[i].Open() && (last == nil || runs[i].Attempt > last.Attempt) {
			last = &runs[i]
		}
	}
	if last == nil || last.Outcome == board.OutcomeSucceeded {
		return nil, nil
	}
	changes, err := readChanges(ctx, st, c.ID, runs)
	if err != nil {
		return nil, err
	}
	f := &Fresh{LastAttempt: last.Attempt, RepeatCap: cfg.Policy.RepeatCap}
	if parts := policy.BasisDiff(last.Basis, basisOf(cfg, c, profile)); len(last.Basis) > 0 && len(parts) > 0 {
		f.Changed = append(f.Changed, "changed since attempt "+fmt.Sprint(last.Attempt)+": "+policy.DescribeBasis(parts))
	}
	n := 0
	for _, at := range changes {
		if at.After(last.ClaimedAt) {
			n++
		}
	}
	if n > 0 {
		f.Changed = append(f.Changed, fmt.Sprintf("%d edit(s), comment(s), answer(s) or move(s) by a person since attempt %d", n, last.Attempt))
	}
	if k := policy.Kind(last.Kind); !policy.Spec(k).Counts {
		f.Changed = append(f.Changed, fmt.Sprintf("time: %s is a kind time can heal (%s)", k, policy.Spec(k).WhatCanChange))
	}
	f.Repeats = policy.Repeats(ordered(runs, last), changes, nil)
	f.Text = freshText(f, last, c)
	bs, err := readBreakers(ctx, st)
	if err != nil {
		return nil, err
	}
	if b := bs[profile]; last.Fingerprint != "" && b.Fingerprint == last.Fingerprint && b.State != policy.BreakerClosed {
		f.Text = fmt.Sprintf("the card waits on agent profile %s, held for the failure its last attempt showed on other cards too (%s); it runs again once a probe passes, and the held runs do not count", profile, b.Shape)
	}
	return f, nil
}

// ordered is the epoch's finished runs by attempt, up to and including last.
func ordered(runs []board.Run, last *board.Run) []board.Run {
	var out []board.Run
	for _, r := range runs {
		if !r.Open() && r.ID != last.ID {
			out = append(out, r)
		}
	}
	return currentLast(out, *last)
}

func freshText(f *Fresh, last *board.Run, c board.Card) string {
	if len(f.Changed) > 0 {
		return "the next attempt has something new: " + strings.Join(f.Changed, "; ")
	}
	s := fmt.Sprintf("nothing new since attempt %d: the same card, profile, setup and prompt, and no edit, comment or answer since", last.Attempt)
	if f.RepeatCap > 0 && policy.Informative(last.Fingerprint) {
		s += fmt.Sprintf("; %d identical failure(s) in a row so far, and at %d (policy.repeat_cap) the card is blocked", f.Repeats, f.RepeatCap)
	}
	return s + fmt.Sprintf("; to give it something new: drover card edit %s, or a comment with what to do differently", c.Identifier)
}
