package trackertest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/pullflow"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

// onePull is a forge holding one pull request whose read the test sets.
type onePull struct {
	mu sync.Mutex
	st forge.PullState
}

func (f *onePull) EnsurePull(context.Context, forge.PullSpec) (forge.Pull, error) {
	return forge.Pull{Number: f.st.Number, URL: f.st.URL}, nil
}

func (f *onePull) PullState(context.Context, int, string) (forge.PullState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, nil
}

// reviewedCard is a world whose one issue's card waits in review with an
// open pull request #12 (as the pull_open row records it), projected.
func reviewedCard(t *testing.T, kit Kit) (*World, string, board.Card) {
	w := NewWorld(t, kit)
	id := w.Issue("Change the code", `{"sim": ["succeeded"]}`)
	w.SyncOK()
	w.Serve()
	c := w.WaitState(id, "review")
	c.PullRequest = &board.PullRequest{Number: 12, URL: "https://github.com/acme/app/pull/12", Branch: "drover/x", State: board.PullOpen}
	if err := w.Store.Apply(context.Background(), store.Change{Card: &c}); err != nil {
		t.Fatal(err)
	}
	w.Project()
	w.Fake.Calls()
	return w, id, w.Card(id)
}

// follow runs the review loop once with the forge answering st.
func (w *World) follow(st forge.PullState) {
	w.T.Helper()
	cfg := *w.Cfg
	cfg.Workspace.Git = &config.Git{PullRequests: &forge.Config{Kind: "github", Repository: "acme/app"}}
	f := &pullflow.Follower{Store: w.Store, Forge: &onePull{st: st}, Config: func() *config.Config { return &cfg }}
	if n, err := f.Tick(context.Background()); err != nil || n != 1 {
		w.T.Fatalf("follower read %d pull requests (%v), want 1", n, err)
	}
}

// projectedTo is the role the card's newest tracker row moves it to.
func (w *World) projectedTo(c board.Card) board.Role {
	rows, err := w.Store.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	if err != nil {
		w.T.Fatal(err)
	}
	var to board.Role
	for _, r := range rows {
		var pr tracker.Projection
		if r.Channel == tracker.Channel && json.Unmarshal(r.Payload, &pr) == nil && pr.To != "" {
			to = pr.To
		}
	}
	return to
}

// A merged pull request makes the card done, and the issue shows it as
// any done card does (closed on GitHub, the done state on Linear).
func testPullMerged(t *testing.T, kit Kit) {
	w, id, c := reviewedCard(t, kit)
	w.follow(forge.PullState{Number: 12, URL: c.PullRequest.URL, State: forge.StateClosed, Merged: true, MergedBy: "alice"})
	if got := w.Card(id); got.State != "done" {
		t.Fatalf("after the merge the card is in %s", got.State)
	}
	w.Project()
	if to := w.projectedTo(c); to != board.RoleDone {
		t.Fatalf("the merge was projected to %q, want done", to)
	}
	w.Shows(id, board.RoleDone)
}

// A pull request closed without merging blocks the card; the issue shows
// blocked with drover's comment saying what, where and how.
func testPullClosed(t *testing.T, kit Kit) {
	w, id, c := reviewedCard(t, kit)
	w.follow(forge.PullState{Number: 12, URL: c.PullRequest.URL, State: forge.StateClosed, ClosedBy: "bob"})
	if got := w.Card(id); got.State != "blocked" {
		t.Fatalf("after the close the card is in %s", got.State)
	}
	w.Project()
	if to := w.projectedTo(c); to != board.RoleBlocked {
		t.Fatalf("the close was projected to %q, want blocked", to)
	}
	w.Shows(id, board.RoleBlocked)
	cs := w.Fake.Comments(id)
	if len(cs) != 1 || !strings.Contains(cs[0], "PR #12 was closed without merging by bob") || !strings.Contains(cs[0], "drover card resume "+c.Identifier) {
		t.Errorf("comments %q, want one saying the PR was closed and how to go on", cs)
	}
}
