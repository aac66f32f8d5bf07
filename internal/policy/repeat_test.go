package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// runsOf is an epoch of counted runs failing with the given messages ("ok"
// for a success), claimed a minute apart, each on basis b; the last is the
// finishing run.
func runsOf(b map[string]string, msgs ...string) []board.Run {
	var h []board.Run
	for i, m := range msgs {
		r := board.Run{ID: fmt.Sprintf("r%d", i+1), Attempt: i + 1, ClaimedAt: t0.Add(time.Duration(i) * time.Minute), Basis: b}
		if m != "ok" {
			r.Kind, r.Counted, r.Outcome, r.Fingerprint = string(KindUnknown), true, board.OutcomeFailed, Fingerprint(KindUnknown, m, 1)
		} else {
			r.Kind, r.Outcome = string(KindSucceeded), board.OutcomeSucceeded
		}
		h = append(h, r)
	}
	h[len(h)-1].Outcome, h[len(h)-1].Kind, h[len(h)-1].Counted = "", "", false
	return h
}

func TestRepeats(t *testing.T) {
	b := map[string]string{"card": "1", "profile": "2"}
	same := "error: quota for org 42 is gone"
	cases := []struct {
		name    string
		h       []board.Run
		changes []time.Time
		want    int
	}{
		{"three alike", runsOf(b, same, same, same), nil, 3},
		{"numbers differ, still alike", runsOf(b, "error: quota for org 1 is gone", "error: quota for org 2 is gone", same), nil, 3},
		{"text changes every time", runsOf(b, "cannot find alpha", "cannot find beta", "cannot find gamma"), nil, 1},
		{"a success in between", runsOf(b, same, "ok", same), nil, 1},
		{"a comment between the second and third", runsOf(b, same, same, same), []time.Time{t0.Add(90 * time.Second)}, 1},
		{"a comment before the first does not count", runsOf(b, same, same, same), []time.Time{t0.Add(-time.Minute)}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.h
			h[len(h)-1].Fingerprint = Fingerprint(KindUnknown, same, 1)
			if c.name == "text changes every time" {
				h[len(h)-1].Fingerprint = Fingerprint(KindUnknown, "cannot find gamma", 1)
			}
			if got := Repeats(h, c.changes, nil); got != c.want {
				t.Errorf("Repeats = %d, want %d", got, c.want)
			}
		})
	}
	h := runsOf(b, "", "", "")
	h[2].Fingerprint = Fingerprint(KindUnknown, "", 1)
	for i := range h[:2] {
		h[i].Fingerprint = h[2].Fingerprint
	}
	if got := Repeats(h, nil, nil); got != 0 {
		t.Errorf("exits without text: Repeats = %d, want 0 (too little to call them one failure)", got)
	}
	h = runsOf(b, same, same, same)
	h[1].Basis = map[string]string{"card": "other", "profile": "2"}
	h[2].Fingerprint = Fingerprint(KindUnknown, same, 1)
	if got := Repeats(h, nil, nil); got != 1 {
		t.Errorf("an edited card between attempts: Repeats = %d, want 1", got)
	}
	h = runsOf(b, same, same, same)
	h[2].Fingerprint = Fingerprint(KindUnknown, same, 1)
	h[1].Counted, h[1].Outcome = false, board.OutcomeInterrupted
	if got := Repeats(h, nil, nil); got != 2 {
		t.Errorf("an uncounted run in between is passed over: Repeats = %d, want 2", got)
	}
	if d := BasisDiff(map[string]string{"card": "1", "setup": "x"}, map[string]string{"card": "2", "verify": "v"}); strings.Join(d, ",") != "card,setup,verify" {
		t.Errorf("BasisDiff = %v", d)
	}
}

// TestDecideRepeatCap: the third identical failure with nothing changed
// blocks, naming the failure, the attempts and what to change; the cap
// off, or a changed failure, keeps the normal budget.
func TestDecideRepeatCap(t *testing.T) {
	b := map[string]string{"card": "1"}
	msg := "error: quota for org 42 is gone"
	in := input(Defaults(), KindUnknown, runsOf(b, msg, msg, msg))
	in.Classification.Message = msg
	in.History[2].Fingerprint = Fingerprint(KindUnknown, msg, 1)
	d := Decide(in)
	if d.Verb != VerbBlock || d.Outcome != board.OutcomeBlocked || d.BlockReason == nil || d.BlockReason.Kind != string(KindRepeatedFailure) || d.Kind != KindUnknown {
		t.Fatalf("decision %+v, want a repeated_failure block of an unknown run", d)
	}
	for _, w := range []string{"3 times in a row", "attempts 1–3", "quota for org 42 is gone", "policy.repeat_cap 3"} {
		if !strings.Contains(d.BlockReason.What, w) {
			t.Errorf("what %q does not say %q", d.BlockReason.What, w)
		}
	}
	if !strings.Contains(d.BlockReason.How, "drover card resume DRV-7") || len(d.Notify) != 1 || d.Notify[0] != NotifyBlocked {
		t.Errorf("how %q, notify %v", d.BlockReason.How, d.Notify)
	}
	in.Config.MaxAttempts = 3
	if d := Decide(in); d.Verb != VerbGiveUp || d.GaveUp == nil {
		t.Errorf("the last of max_attempts gives up, whatever else: %+v", d)
	}
	in.Config.MaxAttempts = 10
	in.Config.RepeatCap = -1
	if d := Decide(in); d.Verb != VerbRetry || !d.Counted {
		t.Errorf("repeat cap off: %+v, want a counted retry", d)
	}
	in.Config.RepeatCap = 4
	if d := Decide(in); d.Verb != VerbRetry {
		t.Errorf("repeat cap 4 after 3: %+v, want a retry", d)
	}
}
