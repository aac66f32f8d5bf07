package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/pullflow"
	"github.com/drover-dev/drover/internal/store"
)

// memForge is an in-memory forge: one pull request per head branch.
type memForge struct {
	mu      sync.Mutex
	pulls   map[string]*forge.PullState // by head
	ensured int                         // EnsurePull calls
	created int
}

func (f *memForge) EnsurePull(_ context.Context, spec forge.PullSpec) (forge.Pull, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ensured++
	if f.pulls == nil {
		f.pulls = map[string]*forge.PullState{}
	}
	if p, ok := f.pulls[spec.Head]; ok && p.State == forge.StateOpen {
		return forge.Pull{Number: p.Number, URL: p.URL}, nil
	}
	f.created++
	n := f.created + 11
	p := &forge.PullState{Number: n, URL: fmt.Sprintf("https://github.com/acme/app/pull/%d", n), State: forge.StateOpen, HeadSHA: "h1"}
	f.pulls[spec.Head] = p
	return forge.Pull{Number: n, URL: p.URL, Created: true}, nil
}

func (f *memForge) PullState(_ context.Context, number int, _ string) (forge.PullState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pulls {
		if p.Number == number {
			return *p, nil
		}
	}
	return forge.PullState{}, &forge.Error{Op: "pulls/get", Err: forge.ErrNotFound}
}

func (f *memForge) edit(fn func(p *forge.PullState)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pulls {
		fn(p)
	}
}

// pullWorld is gitWorld with workspace.git.pull_request, a forge in
// memory and the leader's deliverer and follower on a clock of the test's.
type pullWorld struct {
	*world
	forge *memForge
	del   *pullflow.Deliverer
	fol   *pullflow.Follower
	now   time.Time
}

func newPullWorld(t *testing.T) *pullWorld {
	remote := bareRemote(t)
	w := newWorldFrom(t, worldWorkflow(3))
	script := gitAgent(t, w.dir, remote)
	w2 := newWorldFrom(t, worldWorkflow(3).
		Set("agents", "default: sh\nprofiles:\n  sh: {kind: command, command: "+script+"}").
		Set("workspace", "{root: "+filepath.Join(w.dir, "ws")+", git: {repo: "+remote+", base: main, pull_request: {repo: acme/app, poll_interval: 1s}}}").
		Prompt("{{ card.body }}\n{% for r in review %}REVIEW {{ r.kind }} {{ r.user }} {{ r.name }}: {{ r.body }}{{ r.summary }}\n{% endfor %}"))
	w2.dir = w.dir
	pw := &pullWorld{world: w2, forge: &memForge{}, now: time.Now().UTC()}
	clock := func() time.Time { return pw.now }
	pw.del = &pullflow.Deliverer{Store: w2.st, Forge: pw.forge, Now: clock}
	pw.fol = &pullflow.Follower{Store: w2.st, Forge: pw.forge, Config: func() *config.Config { return w2.cfg }, Now: clock}
	return pw
}

func (pw *pullWorld) follow() {
	pw.t.Helper()
	pw.now = pw.now.Add(2 * time.Second)
	if _, err := pw.fol.Tick(context.Background()); err != nil {
		pw.t.Fatal(err)
	}
}

// deliver runs the leader's deliverer (the clock moved past the row's time).
func (pw *pullWorld) deliver() {
	pw.t.Helper()
	pw.now = time.Now().UTC().Add(2 * time.Second)
	if _, err := pw.del.Tick(context.Background()); err != nil {
		pw.t.Fatal(err)
	}
}

func (pw *pullWorld) forgeRows(cardID string) []store.OutboxItem {
	return pw.outboxOf(cardID, pullflow.Channel)
}

func (pw *pullWorld) outboxOf(cardID, channel string) []store.OutboxItem {
	rows, err := pw.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: cardID})
	if err != nil {
		pw.t.Fatal(err)
	}
	var out []store.OutboxItem
	for _, r := range rows {
		if r.Channel == channel {
			out = append(out, r)
		}
	}
	return out
}

func lastEvent(evs []board.Event, typ string) *board.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return &evs[i]
		}
	}
	return nil
}

func inReview(c board.Card) bool { return c.State == "review" || c.State == "blocked" }

// A verified, pushed success opens one pull request through one pull_open
// row; a review asking for changes and then a failing check each send the
// card back with what was asked in the next prompt, the same row and the
// same pull request; the check is counted; a merge makes the card done.
func TestPullRequestReviewLoop(t *testing.T) {
	pw := newPullWorld(t)
	stop := pw.run(pw.dispatcher("n1"))
	defer stop()
	c := pw.addBody("Add the greeting", "please edit")
	c = pw.waitFor(c.ID, "review", inReview)
	if c.State != "review" {
		t.Fatalf("the card ended in %s: %+v", c.State, c.BlockReason)
	}
	rows := pw.forgeRows(c.ID)
	branch := "drover/" + strings.ToLower(c.Identifier) + "-add-the-greeting"
	if len(rows) != 1 || rows[0].Event != pullflow.EventOpen || rows[0].Key != pullflow.OpenKey(c.ID, branch) {
		t.Fatalf("forge rows after the success: %+v", rows)
	}
	// A crash after EnsurePull and before the record: the row is still due.
	if _, err := pw.forge.EnsurePull(context.Background(), forge.PullSpec{Head: branch, Base: "main", Title: c.Title}); err != nil {
		t.Fatal(err)
	}
	pw.deliver()
	pw.deliver()
	if pw.forge.created != 1 {
		t.Fatalf("%d pull requests opened, want 1", pw.forge.created)
	}
	c, _ = pw.st.GetCard(context.Background(), c.ID)
	pr := c.PullRequest
	if pr == nil || pr.Number != 12 || pr.Branch != branch || pr.State != board.PullOpen || !strings.HasSuffix(pr.URL, "/pull/12") {
		t.Fatalf("the card's pull request: %+v", pr)
	}
	if ev := lastEvent(pw.events(c.ID), board.EvPullOpened); ev == nil || !strings.Contains(string(ev.Data), `"number":12`) {
		t.Fatalf("no pr_opened event: %+v", ev)
	}
	if e, err := Explain(context.Background(), pw.st, pw.cfg, c.ID, time.Now()); err != nil || e.Next != "PR #12: waiting for review" {
		t.Fatalf("explain in review: %q, %v", e.Next, err)
	}
	pw.follow() // nothing new: stays in review
	if c, _ = pw.st.GetCard(context.Background(), c.ID); c.State != "review" {
		t.Fatalf("a quiet pull request moved the card to %s", c.State)
	}

	pw.forge.edit(func(p *forge.PullState) {
		p.Reviews = append(p.Reviews, forge.Review{ID: 1, User: "bob", State: forge.ReviewChangesRequested, Body: "please add a test"})
	})
	pw.follow()
	ev := lastEvent(pw.events(c.ID), board.EvReviewChangesRequested)
	if ev == nil || ev.Actor != "bob" {
		t.Fatalf("changes_requested: %+v", ev)
	}
	c = pw.waitFor(c.ID, "review again", func(c board.Card) bool { return len(pw.runs(c.ID)) >= 2 && inReview(c) })
	if p := prompts(t, pw.dir, c.Identifier, 2); !strings.Contains(p, "REVIEW review bob : please add a test") {
		t.Fatalf("attempt 2's prompt lacks the review:\n%s", p)
	}
	pw.follow() // the same review again is handled already
	if c, _ = pw.st.GetCard(context.Background(), c.ID); c.State != "review" || len(pw.runs(c.ID)) != 2 {
		t.Fatalf("a handled review acted on again: %s, %d runs", c.State, len(pw.runs(c.ID)))
	}

	pw.forge.edit(func(p *forge.PullState) {
		p.HeadSHA = "h2"
		p.Checks = []forge.Check{{ID: 5, Name: "test", Status: "completed", Conclusion: "failure", Summary: "2 tests failed", URL: "https://ci/5"}}
	})
	pw.follow()
	ev = lastEvent(pw.events(c.ID), board.EvCheckFailed)
	if ev == nil || !strings.Contains(string(ev.Data), `"name":"test"`) || !strings.Contains(string(ev.Data), `"counted":true`) {
		t.Fatalf("check_failed: %+v", ev)
	}
	runs := pw.runs(c.ID)
	if r := runs[len(runs)-1]; r.Kind != "check_failed" || !r.Counted {
		t.Fatalf("the run whose check failed: kind %s counted %v", r.Kind, r.Counted)
	}
	c = pw.waitFor(c.ID, "review a third time", func(c board.Card) bool { return len(pw.runs(c.ID)) >= 3 && inReview(c) })
	if p := prompts(t, pw.dir, c.Identifier, 3); !strings.Contains(p, "REVIEW check  test: 2 tests failed") {
		t.Fatalf("attempt 3's prompt lacks the check:\n%s", p)
	}
	if rows := pw.forgeRows(c.ID); len(rows) != 1 || pw.forge.created != 1 {
		t.Fatalf("%d forge rows, %d pull requests after three attempts; want 1 and 1", len(rows), pw.forge.created)
	}

	pw.forge.edit(func(p *forge.PullState) { p.State, p.Merged, p.MergedBy = forge.StateClosed, true, "alice" })

	pw.follow()
	c, _ = pw.st.GetCard(context.Background(), c.ID)
	if c.State != "done" || c.PullRequest.State != board.PullMerged {
		t.Fatalf("after the merge: %s, %+v", c.State, c.PullRequest)
	}
	if ev := lastEvent(pw.events(c.ID), board.EvPullMerged); ev == nil || ev.Actor != "alice" {
		t.Fatalf("pr_merged: %+v", ev)
	}
	if e, _ := Explain(context.Background(), pw.st, pw.cfg, c.ID, time.Now()); e.Next != "PR #12 merged by alice: done" {
		t.Fatalf("explain after the merge: %q", e.Next)
	}
}

// A pull request closed without merging blocks the card saying who closed
// it, where, and how to go on.
func TestPullRequestClosedBlocks(t *testing.T) {
	pw := newPullWorld(t)
	var noticed []notify.Message
	pw.fol.Notify = func(_ *config.Config, m notify.Message) []store.OutboxItem {
		noticed = append(noticed, m)
		return []store.OutboxItem{{Key: m.Key, Channel: "test", Event: m.Event, CardID: m.Card.ID}}
	}
	stop := pw.run(pw.dispatcher("n1"))
	defer stop()
	c := pw.addBody("Close me", "please edit")
	if c = pw.waitFor(c.ID, "review", inReview); c.State != "review" {
		t.Fatalf("the card ended in %s", c.State)
	}
	pw.deliver()
	pw.forge.edit(func(p *forge.PullState) { p.State, p.ClosedBy = forge.StateClosed, "bob" })
	pw.follow()
	c, _ = pw.st.GetCard(context.Background(), c.ID)
	r := c.BlockReason
	if c.State != "blocked" || r == nil || r.What != "PR #12 was closed without merging by bob" || r.Where != c.PullRequest.URL ||
		r.How != "reopen the PR and run drover card resume "+c.Identifier+", or cancel the card" {
		t.Fatalf("after the close: %s, %+v", c.State, r)
	}
	if len(noticed) != 1 || noticed[0].Event != "blocked" || noticed[0].Reason == nil || noticed[0].Reason.What != r.What {
		t.Fatalf("notifications of the close: %+v", noticed)
	}
	if rows := pw.outboxOf(c.ID, "test"); len(rows) != 1 || rows[0].Event != "blocked" {
		t.Fatalf("the close's notification rows: %+v", rows)
	}
	var data map[string]any
	if ev := lastEvent(pw.events(c.ID), board.EvPullClosed); ev == nil || ev.Actor != "bob" || json.Unmarshal(ev.Data, &data) != nil {
		t.Fatalf("pr_closed: %+v", ev)
	}

	// What the block says to do: reopen the PR, resume the card. The next
	// success waits in review on the same, reopened pull request.
	pw.forge.edit(func(p *forge.PullState) { p.State, p.ClosedBy = forge.StateOpen, "" })
	ops := &operator.Service{Store: pw.st, Board: pw.cfg.Board, Actor: "operator:test"}
	if _, err := ops.Resume(context.Background(), c.ID); err != nil {
		t.Fatal(err)
	}
	c = pw.waitFor(c.ID, "review after the resume", func(c board.Card) bool { return len(pw.runs(c.ID)) >= 2 && inReview(c) })
	pw.deliver()
	pw.now = pw.now.Add(time.Minute) // past the last read's poll interval
	pw.follow()
	c, _ = pw.st.GetCard(context.Background(), c.ID)
	if c.State != "review" || c.PullRequest.State != board.PullOpen || pw.forge.created != 1 {
		t.Fatalf("after reopening and resuming: %s, pull request %+v, %d created", c.State, c.PullRequest, pw.forge.created)
	}
	if e, _ := Explain(context.Background(), pw.st, pw.cfg, c.ID, time.Now()); e.Next != "PR #12: waiting for review" {
		t.Fatalf("explain after the reopen: %q", e.Next)
	}
}

// A check that keeps failing on each new head is bounded like a failed
// verify: every failure counts, the one that spends policy.max_attempts (3
// here) gives the card up, blocked, notified, and explain said each time
// which attempt came next.
func TestPullRequestFailingChecksGiveUp(t *testing.T) {
	pw := newPullWorld(t)
	var noticed []notify.Message
	pw.fol.Notify = func(_ *config.Config, m notify.Message) []store.OutboxItem {
		noticed = append(noticed, m)
		return nil
	}
	stop := pw.run(pw.dispatcher("n1"))
	defer stop()
	c := pw.addBody("Never green", "please edit")
	for attempt := 1; attempt <= 3; attempt++ {
		c = pw.waitFor(c.ID, fmt.Sprintf("review after attempt %d", attempt), func(c board.Card) bool { return len(pw.runs(c.ID)) >= attempt && inReview(c) })
		if c.State != "review" {
			t.Fatalf("attempt %d ended in %s: %+v", attempt, c.State, c.BlockReason)
		}
		pw.deliver()
		pw.forge.edit(func(p *forge.PullState) {
			p.HeadSHA = fmt.Sprintf("h%d", attempt)
			p.Checks = []forge.Check{{ID: int64(100 + attempt), Name: "test", Status: "completed", Conclusion: "failure", Summary: "red"}}
		})
		// Read now, on the dispatcher's own clock, so the retry's backoff
		// is not pushed past the test.
		pw.now = time.Now().UTC()
		pw.fol.Poke(0)
		if n, err := pw.fol.Tick(context.Background()); err != nil || n != 1 {
			t.Fatalf("follower read %d (%v), want 1", n, err)
		}
		c, _ = pw.st.GetCard(context.Background(), c.ID)
		if attempt < 3 {
			want := fmt.Sprintf("PR #12: check `test` failed, attempt %d of 3 next", attempt+1)
			if e, _ := Explain(context.Background(), pw.st, pw.cfg, c.ID, time.Now()); !strings.HasPrefix(e.Next, want) {
				t.Fatalf("explain after failure %d: %q, want %q", attempt, e.Next, want)
			}
		}
	}
	if c.State != "blocked" || c.GaveUp == nil || c.GaveUp.Kind != "check_failed" || c.GaveUp.Attempts != 3 {
		t.Fatalf("after three failing checks: %s, gave up %+v", c.State, c.GaveUp)
	}
	counted := 0
	for _, r := range pw.runs(c.ID) {
		if r.Kind == "check_failed" && r.Counted {
			counted++
		}
	}
	if counted != 3 || len(pw.runs(c.ID)) != 3 {
		t.Fatalf("%d counted check_failed runs of %d, want 3 of 3", counted, len(pw.runs(c.ID)))
	}
	if len(noticed) != 1 || noticed[0].Event != "gave_up" {
		t.Fatalf("notifications: %+v, want one gave_up", noticed)
	}
	if pw.forge.created != 1 {
		t.Fatalf("%d pull requests opened, want 1", pw.forge.created)
	}
}
