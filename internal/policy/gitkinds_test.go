package policy

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// no_changes is counted and has a cap of its own (2): two retries with
// backoff, the third in an epoch gives up naming its cap.
func TestNoChangeCountedAndCapped(t *testing.T) {
	cfg := Defaults()
	for i, want := range []Verb{VerbRetry, VerbRetry, VerbGiveUp} {
		var prior []Kind
		for j := 0; j < i; j++ {
			prior = append(prior, KindNoChange)
		}
		d := Decide(input(cfg, KindNoChange, hist(prior...)))
		if d.Verb != want || !d.Counted {
			t.Fatalf("no_changes %d: %s counted %v (%s)", i+1, d.Verb, d.Counted, d.Explain)
		}
		if want == VerbRetry && d.NextAttemptAt == nil {
			t.Fatalf("no_changes %d is retried without a time: %+v", i+1, d)
		}
		if want == VerbGiveUp && (!strings.Contains(d.Explain, "policy.kinds.no_changes.cap") || d.BlockReason == nil || !strings.Contains(d.BlockReason.How, "change_required: false")) {
			t.Fatalf("the give-up does not name the cap or the way out: %s / %+v", d.Explain, d.BlockReason)
		}
	}
	// policy.kinds.no_changes.cap may be set (it is counted, yet capped).
	one := 1
	cfg.Kinds[KindNoChange] = KindPolicy{Cap: &one}
	if err := cfg.Validate(nil); err != nil {
		t.Fatalf("policy.kinds.no_changes.cap: %v", err)
	}
	if d := Decide(input(cfg, KindNoChange, hist(KindNoChange))); d.Verb != VerbGiveUp {
		t.Fatalf("with cap 1 the second no_changes: %s", d.Verb)
	}
}

// push_rejected blocks at once with drover's own what, where and how.
func TestPushRejectedBlocksWithItsOwnReason(t *testing.T) {
	in := input(Defaults(), KindPushRejected, hist())
	in.Classification.Reason = &board.BlockReason{What: "someone else pushed to drover/x", Where: "repo /r.git, branch drover/x: remote aaa, ours bbb"}
	d := Decide(in)
	if d.Verb != VerbBlock || d.NextState != "blocked" || d.BlockReason == nil || d.BlockReason.Kind != "push_rejected" {
		t.Fatalf("push_rejected: %+v", d)
	}
	r := d.BlockReason
	if r.What != "someone else pushed to drover/x" || !strings.Contains(r.Where, "remote aaa") || !strings.Contains(r.How, "never force-pushes") || !strings.Contains(r.How, "drover card resume DRV-7") {
		t.Fatalf("push_rejected's reason: %+v", r)
	}
}
