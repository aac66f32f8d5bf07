package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

func releaseIn(h []board.Run, reason string) ReleaseInput {
	return ReleaseInput{
		Config: Defaults(), Card: board.Card{ID: "c1", Identifier: "DRV-7", State: "in_progress"},
		CardRole: board.RoleRunning, History: h, Reason: reason, Now: t0,
		EligibleState: "ready", BlockedState: "blocked", AgentProfile: "claude",
	}
}

func TestReleaseChurn(t *testing.T) {
	var h []board.Run
	for i := 1; i <= 5; i++ {
		h = append(h, board.Run{ID: fmt.Sprintf("r%d", i), Attempt: i})
		d := DecideRelease(releaseIn(h, fmt.Sprintf("no capacity %d", i)))
		h[i-1].Outcome = d.Outcome
		if d.Outcome != board.OutcomeReleased || d.Counted {
			t.Fatalf("release %d: %+v", i, d)
		}
		if i < 5 {
			if d.Verb != VerbRelease || d.NextState != "ready" || d.NextAttemptAt != nil || len(d.Notify) != 0 {
				t.Fatalf("release %d: %+v", i, d)
			}
			continue
		}
		br := d.BlockReason
		if d.Verb != VerbBlock || d.NextState != "blocked" || br == nil || br.Kind != ReleaseChurnKind ||
			!strings.Contains(br.What, "no capacity 5") || !strings.Contains(br.How, "drover card resume DRV-7") ||
			strings.Join(d.Notify, ",") != "blocked" {
			t.Fatalf("fifth release: %+v %+v", d, br)
		}
	}
	// A started run in between resets the streak.
	h = hist(KindNone, KindNone, KindNone, KindAgentFailed)
	for i := range h[:3] {
		h[i].Outcome, h[i].Kind = board.OutcomeReleased, ""
	}
	h[4-1].Outcome = board.OutcomeFailed
	if d := DecideRelease(releaseIn(h, "lease")); d.Verb != VerbRelease {
		t.Fatalf("streak broken by a start: %+v", d)
	}
	in := releaseIn(hist(), "node draining")
	in.After = 30 * time.Second
	if d := DecideRelease(in); d.NextAttemptAt == nil || d.NextAttemptAt.Sub(t0) != 30*time.Second {
		t.Fatalf("after: %+v", d)
	}
	in.Card.State, in.CardRole = "blocked", board.RoleBlocked
	if d := DecideRelease(in); d.Verb != VerbHold || d.NextState != "blocked" {
		t.Fatalf("sink: %+v", d)
	}
}
