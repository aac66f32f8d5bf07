package pullflow

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Actor is who drover's own writes of the review loop are by.
const Actor = "forge"

// change is the write an outcome makes to card c (history: the runs of its
// current retry epoch, for a counted check_failed). Pure.
func change(cfg *config.Config, c board.Card, out Outcome, history []board.Run, now time.Time) store.Change {
	next := c
	pr := out.PR
	next.PullRequest = &pr
	ch := store.Change{Card: &next}
	col := func(r board.Role) string { x, _ := cfg.Board.First(r); return x.Name }
	ev := func(typ, actor, reason string, data map[string]any) board.Event {
		data["number"], data["url"], data["to"] = pr.Number, pr.URL, next.State
		b, _ := json.Marshal(data)
		return board.Event{At: now, CardID: c.ID, Type: typ, Actor: actorOr(actor), Reason: reason, Data: b}
	}
	switch out.Verdict {
	case Merged:
		next.State, next.NextAttemptAt, next.BlockReason = col(board.RoleDone), nil, nil
		next.StateReason = fmt.Sprintf("PR #%d merged by %s: done", pr.Number, orSomeone(out.By))
		ch.Events = []board.Event{ev(board.EvPullMerged, out.By, next.StateReason, map[string]any{"by": out.By})}
	case Closed:
		blocked := col(board.RoleBlocked)
		if blocked == "" {
			blocked = cfg.Policy.FailedState
		}
		next.State, next.NextAttemptAt = blocked, nil
		next.BlockReason = &board.BlockReason{Kind: "pr_closed",
			What:  fmt.Sprintf("PR #%d was closed without merging by %s", pr.Number, orSomeone(out.By)),
			Where: pr.URL,
			How:   fmt.Sprintf("reopen the PR and run drover card resume %s, or cancel the card", c.Identifier)}
		next.StateReason = next.BlockReason.What
		ch.Events = []board.Event{ev(board.EvPullClosed, out.By, next.StateReason, map[string]any{"by": out.By})}
		ch.Comments = []board.Comment{{CardID: c.ID, Author: "dispatcher:" + Actor, At: now,
			Body: fmt.Sprintf("Blocked (pr_closed)\n\nWhat: %s\nWhere: %s\nHow to continue: %s", next.BlockReason.What, next.BlockReason.Where, next.BlockReason.How)}}
	case Changes:
		next.State, next.NextAttemptAt, next.BlockReason = col(board.RoleEligible), nil, nil
		next.StateReason = fmt.Sprintf("PR #%d: %s asked for changes; the next attempt gets the review", pr.Number, orSomeone(out.By))
		ch.Events = []board.Event{ev(board.EvReviewChangesRequested, out.By, next.StateReason,
			map[string]any{"reviews": nonNil(out.Reviews), "comments": nonNil(out.Comments), "review": out.Review})}
	case CheckFailed:
		checkFailed(cfg, c, &next, &ch, out, history, now, ev)
	}
	return ch
}

// checkFailed sends the card back for a failing check, counted: the run
// that pushed the head is recorded as failed with check_failed (its
// success did not hold), and the policy decides as for any counted
// failure: a retry with backoff, or a give-up once max_attempts is spent.
func checkFailed(cfg *config.Config, c board.Card, next *board.Card, ch *store.Change, out Outcome, history []board.Run, now time.Time,
	ev func(string, string, string, map[string]any) board.Event) {
	chk := out.Check
	msg := fmt.Sprintf("check %s failed on PR #%d: %s", chk.Name, out.PR.Number, chk.Summary)
	data := map[string]any{"name": chk.Name, "summary": chk.Summary, "url": chk.URL, "review": out.Review}
	last := -1
	for i, r := range history {
		if r.Outcome == board.OutcomeSucceeded {
			last = i
		}
	}
	if last < 0 {
		next.State, next.NextAttemptAt = firstCol(cfg, board.RoleEligible), nil
		next.StateReason = "PR #" + fmt.Sprint(out.PR.Number) + ": " + msg
		data["counted"] = false
		ch.Events = []board.Event{ev(board.EvCheckFailed, Actor, next.StateReason, data)}
		return
	}
	run := history[last]
	hist := append(append([]board.Run(nil), history[:last]...), history[last+1:]...)
	hist = append(hist, run)
	blocked := firstCol(cfg, board.RoleBlocked)
	if blocked == "" {
		blocked = cfg.Policy.FailedState
	}
	dec := policy.Decide(policy.Input{Config: cfg.Policy, Card: c, CardRole: board.RoleCompleted,
		Classification: policy.Classification{Kind: policy.KindCheckFailed, Source: "forge:check", Message: msg},
		History:        hist, Now: now, FailedState: cfg.Policy.FailedState, BlockedState: blocked,
		EligibleState: firstCol(cfg, board.RoleEligible), ParkedState: firstCol(cfg, board.RoleParked),
		CompletedState: c.State, AgentProfile: run.Agent, LogPath: run.LogPath, Workspace: run.Workspace})
	run.Outcome, run.Kind, run.Counted, run.Decision = board.OutcomeFailed, string(policy.KindCheckFailed), dec.Counted, dec.Explain
	run.Error = excerpt.Clip(msg, 2000)
	ch.Run = &run
	if dec.NextState != "" {
		next.State = dec.NextState
	}
	next.StateReason = fmt.Sprintf("PR #%d: %s", out.PR.Number, dec.Explain)
	next.NextAttemptAt = dec.NextAttemptAt
	if dec.BlockReason != nil {
		next.BlockReason = dec.BlockReason
	}
	if dec.GaveUp != nil {
		next.GaveUp = dec.GaveUp
	}
	data["counted"], data["attempt"], data["verb"], data["next_attempt_at"] = dec.Counted, policy.CountedAttempts(hist[:len(hist)-1])+1, dec.Verb, dec.NextAttemptAt
	e := ev(board.EvCheckFailed, Actor, next.StateReason, data)
	e.RunID = run.ID
	ch.Events = []board.Event{e}
	if dec.Event != "" && dec.Event != board.EvRetry {
		// A give-up or a block: its own event too, for the tracker and the log.
		f := ev(dec.Event, Actor, dec.Explain, map[string]any{"kind": string(policy.KindCheckFailed)})
		f.RunID = run.ID
		ch.Events = append(ch.Events, f)
	}
}

func firstCol(cfg *config.Config, r board.Role) string {
	c, _ := cfg.Board.First(r)
	return c.Name
}

func actorOr(a string) string {
	if a == "" {
		return Actor
	}
	return a
}

func orSomeone(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
