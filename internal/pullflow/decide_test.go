package pullflow

import (
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/forge"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	open := board.PullRequest{Number: 12, URL: "u", Branch: "b", State: board.PullOpen, HeadSHA: "h1", ETag: "e0"}
	seen := open
	seen.Handled = board.PullHandled{Review: 5, Comment: 9, Checks: []int64{30}}
	changes := forge.Review{ID: 6, User: "bob", State: forge.ReviewChangesRequested, Body: "add a test"}
	approve := forge.Review{ID: 7, User: "carol", State: forge.ReviewApproved}
	comment := forge.ReviewComment{ID: 10, User: "bob", Path: "a.go", Line: 3, Body: "off by one"}
	failing := forge.Check{ID: 31, Name: "test", Status: "completed", Conclusion: "failure", Summary: "2 failed", URL: "ci"}
	passing := forge.Check{ID: 32, Name: "lint", Status: "completed", Conclusion: "success"}
	cases := []struct {
		name     string
		pr       board.PullRequest
		st       forge.PullState
		required []string
		verdict  Verdict
		by       string
		items    int
		state    string
		handled  board.PullHandled
	}{
		{"not modified", seen, forge.PullState{NotModified: true}, nil, None, "", 0, board.PullOpen, seen.Handled},
		{"open, nothing new", seen, forge.PullState{State: "open", HeadSHA: "h1", Reviews: []forge.Review{{ID: 5, State: forge.ReviewChangesRequested}}}, nil, None, "", 0, board.PullOpen, board.PullHandled{Review: 5, Comment: 9}},
		{"merged", open, forge.PullState{State: "closed", Merged: true, MergedBy: "alice"}, nil, Merged, "alice", 0, board.PullMerged, board.PullHandled{}},
		{"merged wins over a review", open, forge.PullState{State: "closed", Merged: true, MergedBy: "alice", Reviews: []forge.Review{changes}}, nil, Merged, "alice", 0, board.PullMerged, board.PullHandled{}},
		{"closed", open, forge.PullState{State: "closed", ClosedBy: "bob"}, nil, Closed, "bob", 0, board.PullClosed, board.PullHandled{}},
		{"changes requested", seen, forge.PullState{State: "open", Reviews: []forge.Review{changes, approve}}, nil, Changes, "bob", 1, board.PullOpen, board.PullHandled{Review: 7, Comment: 9}},
		{"a new review comment", seen, forge.PullState{State: "open", Comments: []forge.ReviewComment{{ID: 9, Body: "old"}, comment}}, nil, Changes, "bob", 1, board.PullOpen, board.PullHandled{Review: 5, Comment: 10}},
		{"an approval alone", seen, forge.PullState{State: "open", Reviews: []forge.Review{approve}}, nil, None, "", 0, board.PullOpen, board.PullHandled{Review: 7, Comment: 9}},
		{"a failing check", open, forge.PullState{State: "open", Checks: []forge.Check{failing, passing}}, nil, CheckFailed, "", 1, board.PullOpen, board.PullHandled{Checks: []int64{31}}},
		{"the same failing check again", seen, forge.PullState{State: "open", Checks: []forge.Check{{ID: 30, Name: "test", Status: "completed", Conclusion: "failure"}}}, nil, None, "", 0, board.PullOpen, board.PullHandled{Review: 5, Comment: 9, Checks: []int64{30}}},
		{"a re-run that fails again", seen, forge.PullState{State: "open", Checks: []forge.Check{{ID: 30, Name: "test", Status: "completed", Conclusion: "failure"}, failing}}, nil, CheckFailed, "", 1, board.PullOpen, board.PullHandled{Review: 5, Comment: 9, Checks: []int64{31}}},
		{"a failing check not required", open, forge.PullState{State: "open", Checks: []forge.Check{failing, passing}}, []string{"lint"}, None, "", 0, board.PullOpen, board.PullHandled{}},
		{"a pending check", open, forge.PullState{State: "open", Checks: []forge.Check{{ID: 40, Name: "test", Status: "in_progress"}}}, nil, None, "", 0, board.PullOpen, board.PullHandled{}},
		{"a review and a failing check: the review leads", open, forge.PullState{State: "open", Reviews: []forge.Review{changes}, Checks: []forge.Check{failing}}, nil, Changes, "bob", 2, board.PullOpen, board.PullHandled{Review: 6, Checks: []int64{31}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := Decide(c.pr, c.st, c.required, now)
			if out.Verdict != c.verdict || out.By != c.by || len(out.Review) != c.items || out.PR.State != c.state {
				t.Fatalf("verdict %s by %q, %d items, state %s; want %s by %q, %d items, state %s (%+v)",
					out.Verdict, out.By, len(out.Review), out.PR.State, c.verdict, c.by, c.items, c.state, out)
			}
			h := out.PR.Handled
			if h.Review != c.handled.Review || h.Comment != c.handled.Comment || len(h.Checks) != len(c.handled.Checks) ||
				(len(h.Checks) > 0 && h.Checks[0] != c.handled.Checks[0]) {
				t.Fatalf("handled %+v, want %+v", h, c.handled)
			}
			if out.PR.CheckedAt == nil || !out.PR.CheckedAt.Equal(now) {
				t.Fatalf("checked_at %v", out.PR.CheckedAt)
			}
			if c.verdict == CheckFailed && (out.Check == nil || out.Review[0].Name != out.Check.Name || out.Review[0].URL == "") {
				t.Fatalf("check item %+v", out.Review)
			}
			// Deciding again on what is now handled does nothing.
			if again := Decide(out.PR, c.st, c.required, now); c.verdict != Merged && c.verdict != Closed && again.Verdict != None {
				t.Fatalf("the same read decided again: %s", again.Verdict)
			}
		})
	}
}
