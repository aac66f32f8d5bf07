package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A card's work product through the built binary: workspace.git on a local
// bare repository, workspace.git.pull_request on the GitHub fake, a
// command agent that only edits a file. drover commits, pushes, opens one
// pull request, follows it and hands a review back to the agent. No hook
// and no agent skill does git.

// prBranch is the default branch name of a card with a plain title.
func prBranch(c card, slug string) string {
	return "drover/" + strings.ToLower(c.Identifier) + "-" + slug
}

// The first "Done when": card → branch → PR → review comments →
// second attempt → merged → done, every transition in the audit log.
func TestPullRequestReviewLoopToMerge(t *testing.T) {
	p := newPREnv(t, prOpts{api: true})
	p.start()
	add := p.addCard("Add a greeting")
	branch := prBranch(add, "add-a-greeting")

	// Attempt 1: drover's commit pushed, one pull request, the card in
	// review waiting for it.
	c := p.waitPR(add.Identifier, 40*time.Second, "review")
	pr := c.PullRequest
	sha1 := p.branchSHA(branch)
	if sha1 == "" {
		t.Fatalf("%s was not pushed to the remote", branch)
	}
	if n := p.gh.Count("POST /pulls"); n != 1 {
		t.Fatalf("POST /pulls %d times, want 1", n)
	}
	gp := p.gh.Pull(pr.Number)
	if pr.Branch != branch || pr.State != "open" || pr.URL == "" || gp.Head != branch || gp.Base != "main" || gp.State != "open" {
		t.Fatalf("the card's pull request %+v; GitHub's %+v", pr, gp)
	}
	p.waitHead(add.Identifier, pr.Number, sha1)
	if got := humanGit(t, p.remote, "log", "-1", "--format=%an", sha1); got != "drover" {
		t.Errorf("the pushed commit is by %q, want drover's", got)
	}
	if out := p.ok("explain", add.Identifier); !strings.Contains(out, fmt.Sprintf("PR #%d: waiting for review", pr.Number)) {
		t.Errorf("explain does not say the card waits for its review:\n%s", out)
	}
	if p1 := p.prompt(add.Identifier, 1); p1 == "" || strings.Contains(p1, "A reviewer asked for changes") {
		t.Fatalf("attempt 1's prompt:\n%s", p1)
	}

	// A reviewer asks for changes, with a body and a comment on a line:
	// the card is eligible again and attempt 2's prompt carries both.
	const body, line = "Please greet in French too.", "Capitalise the greeting."
	rid := p.gh.SubmitReview(pr.Number, "alice", "CHANGES_REQUESTED", body)
	p.gh.AddReviewComment(pr.Number, rid, "alice", "greeting.txt", 1, line)
	p2 := p.waitPrompt(add.Identifier, 2)
	for _, want := range []string{fmt.Sprintf("A reviewer asked for changes on PR #%d:", pr.Number), body, line} {
		if !strings.Contains(p2, want) {
			t.Errorf("attempt 2's prompt lacks %q:\n%s", want, p2)
		}
	}

	// Attempt 2's commit goes to the same branch and the same pull
	// request: its head moves, no second pull request, nothing forced.
	var sha2 string
	eventually(t, 30*time.Second, "attempt 2 pushed", func() bool {
		sha2 = p.branchSHA(branch)
		return sha2 != sha1 && p.prCard(add.Identifier).State == "review"
	})
	p.waitHead(add.Identifier, pr.Number, sha2)
	humanGit(t, p.remote, "merge-base", "--is-ancestor", sha1, sha2)
	p.settled(add.Identifier, 3, "the review of the old head")
	if n := p.gh.Count("POST /pulls"); n != 1 || len(p.gh.Pulls()) != 1 {
		t.Fatalf("POST /pulls %d times, %d pull requests; want one of each", n, len(p.gh.Pulls()))
	}

	// Merged on GitHub: the card is done.
	p.gh.MergePull(pr.Number, "bob")
	c = p.waitPR(add.Identifier, 20*time.Second, "done")
	if c.PullRequest.State != "merged" {
		t.Errorf("the merged card's pull request: %+v", c.PullRequest)
	}
	if a := p.apiCard(add.Identifier).PullRequest; a == nil || a.Number != pr.Number || a.URL != pr.URL || a.State != "merged" || a.HeadSHA != sha2 {
		t.Errorf("the API's pull request of %s: %+v", add.Identifier, a)
	}
	if out := p.ok("explain", add.Identifier); !strings.Contains(out, fmt.Sprintf("PR #%d merged by bob", pr.Number)) {
		t.Errorf("explain does not say who merged it:\n%s", out)
	}

	// The audit log, in order, each with who and why.
	evs := p.events(add.Identifier)
	opened, asked, merged := eventIndex(evs, "pr_opened"), eventIndex(evs, "changes_requested"), eventIndex(evs, "pr_merged")
	if opened < 0 || asked < opened || merged < asked {
		t.Fatalf("pr_opened at %d, changes_requested at %d, pr_merged at %d; want all, in that order: %+v", opened, asked, merged, evs)
	}
	for i, who := range map[int]string{opened: "", asked: "alice", merged: "bob"} {
		ev := evs[i]
		if ev.Actor == "" || ev.Reason == "" || !strings.Contains(says(ev), who) {
			t.Errorf("%s does not say who (%q) and why: %+v", ev.Type, who, ev)
		}
	}
	if !strings.Contains(says(evs[opened]), fmt.Sprintf("#%d", pr.Number)) && !strings.Contains(says(evs[opened]), pr.URL) {
		t.Errorf("pr_opened does not name the pull request: %+v", evs[opened])
	}
}

// A failing required check on the pull request's head: the card runs
// again with the check's name and summary in its prompt, the run counted;
// a failing check that is not required changes nothing.
func TestPullRequestFailingCheckReachesTheAgent(t *testing.T) {
	p := newPREnv(t, prOpts{checks: []string{"test"}})
	p.start()
	add := p.addCard("Add a greeting")
	branch := prBranch(add, "add-a-greeting")
	pr := p.waitPR(add.Identifier, 40*time.Second, "review").PullRequest
	sha1 := p.branchSHA(branch)
	p.waitHead(add.Identifier, pr.Number, sha1)

	p.gh.AddCheckRun(sha1, "lint", "completed", "failure", "style", "a line is too long", "https://ci.example/lint/1")
	p.settled(add.Identifier, 2, "a failing check that is not required")

	const summary = "TestGreeting: want Bonjour, got hello"
	p.gh.AddCheckRun(sha1, "test", "completed", "failure", "1 test failed", summary, "https://ci.example/test/1")
	p2 := p.waitPrompt(add.Identifier, 2)
	for _, want := range []string{fmt.Sprintf("Check `test` failed on PR #%d", pr.Number), summary} {
		if !strings.Contains(p2, want) {
			t.Errorf("attempt 2's prompt lacks %q:\n%s", want, p2)
		}
	}
	counted := false
	for _, r := range p.runs(add.Identifier) {
		if r.Kind == "check_failed" && r.Counted {
			counted = true
		}
	}
	if !counted {
		t.Errorf("no run of kind check_failed counted: %+v", p.runs(add.Identifier))
	}
	if eventIndex(p.events(add.Identifier), "check_failed") < 0 {
		t.Errorf("no check_failed event: %+v", p.events(add.Identifier))
	}
	eventually(t, 30*time.Second, "attempt 2 pushed", func() bool {
		return p.branchSHA(branch) != sha1 && p.prCard(add.Identifier).State == "review"
	})
	p.waitHead(add.Identifier, pr.Number, p.branchSHA(branch))
	p.settled(add.Identifier, 3, "the failed check of the old head")
	if n := p.gh.Count("POST /pulls"); n != 1 {
		t.Errorf("POST /pulls %d times, want 1", n)
	}
}

// Closed on GitHub without a merge: the card is blocked saying so.
func TestPullRequestClosedWithoutMergeBlocks(t *testing.T) {
	p := newPREnv(t, prOpts{})
	p.start()
	add := p.addCard("Add a greeting")
	pr := p.waitPR(add.Identifier, 40*time.Second, "review").PullRequest
	p.gh.ClosePull(pr.Number, "carol")
	c := p.waitPR(add.Identifier, 20*time.Second, "blocked")
	r := c.BlockReason
	if c.PullRequest.State != "closed" || r == nil || !strings.Contains(r.What, fmt.Sprintf("#%d", pr.Number)) ||
		!strings.Contains(r.What+r.Where, "closed") || r.Where == "" || !strings.Contains(r.How, "drover card") {
		t.Fatalf("the closed card: %+v, %+v", c.PullRequest, r)
	}
	if i := eventIndex(p.events(add.Identifier), "pr_closed"); i < 0 || !strings.Contains(says(p.events(add.Identifier)[i]), "carol") {
		t.Errorf("no pr_closed event naming who closed it: %+v", p.events(add.Identifier))
	}
}

// A review sends the card back; while attempt 2 runs a human pushes to
// the card's branch, so drover's commit does not contain theirs and its
// push is refused: the card is blocked push_rejected and the human's
// commit stays. (A human's push between attempts is no conflict: drover
// fast-forwards the card's clean worktree to it before the next attempt.)
func TestPullRequestHumanPushIsNeverOverwritten(t *testing.T) {
	p := newPREnv(t, prOpts{})
	p.start()
	add := p.addCard("Add a greeting")
	branch := prBranch(add, "add-a-greeting")
	pr := p.waitPR(add.Identifier, 40*time.Second, "review").PullRequest
	p.writeFile("hold-"+add.Identifier, "")
	p.gh.SubmitReview(pr.Number, "alice", "CHANGES_REQUESTED", "One more thing.")
	p.waitPrompt(add.Identifier, 2)

	human := p.dir + "/human"
	humanGit(t, p.dir, "clone", "-q", "-b", branch, p.remote, human)
	p.writeFile("human/human.txt", "mine\n")
	humanGit(t, human, "add", "-A")
	humanGit(t, human, "commit", "-q", "-m", "a human's commit")
	humanGit(t, human, "push", "-q", "origin", branch)
	theirs := p.branchSHA(branch)
	eventually(t, 10*time.Second, "GitHub sees the human's push", func() bool { return p.gh.Pull(pr.Number).HeadSHA == theirs })
	if err := os.Remove(filepath.Join(p.dir, "hold-"+add.Identifier)); err != nil {
		t.Fatal(err)
	}
	var c prCard
	eventually(t, 30*time.Second, "the card blocked", func() bool { c = p.prCard(add.Identifier); return c.State == "blocked" })
	r := c.BlockReason
	if r == nil || r.Kind != "push_rejected" || !strings.Contains(r.What, branch) || !strings.Contains(r.Where, theirs) ||
		!strings.Contains(r.How, "drover card resume "+add.Identifier) {
		t.Fatalf("blocked with %+v", r)
	}
	if got := p.branchSHA(branch); got != theirs {
		t.Fatalf("the remote branch moved from the human's %s to %s", theirs, got)
	}
	if n := p.gh.Count("POST /pulls"); n != 1 {
		t.Errorf("POST /pulls %d times, want 1", n)
	}
}

// A signed webhook makes drover read the pull request at once: with a poll
// interval of an hour, only POST /api/v1/webhooks/pulls can bring a review
// back to the agent within seconds; a delivery signed with another secret
// is refused and reads nothing.
func TestPullRequestWebhookReadsAtOnce(t *testing.T) {
	const secret = "hook-s3cret"
	p := newPREnv(t, prOpts{api: true, poll: time.Hour, secret: secret})
	p.start()
	add := p.addCard("Wire the hook")
	c := p.waitPR(add.Identifier, 40*time.Second, "review")
	n := c.PullRequest.Number
	// The follower's first read (at once after the pull request opened)
	// is done before the review exists: the next is an hour away.
	eventually(t, 20*time.Second, "the first read of the pull request", func() bool { return p.prCard(add.Identifier).PullRequest.CheckedAt != nil })
	time.Sleep(1500 * time.Millisecond)
	p.gh.SubmitReview(n, "dana", "CHANGES_REQUESTED", "Rename the hook.")
	body := fmt.Sprintf(`{"action": "submitted", "review": {"id": 1, "state": "changes_requested"}, "pull_request": {"number": %d, "head": {"ref": %q}}, "repository": {"full_name": "acme/app"}}`, n, c.PullRequest.Branch)
	post := func(key string) int {
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(body))
		req, _ := http.NewRequest(http.MethodPost, serveAddr(t, p.env)+"/api/v1/webhooks/pulls", strings.NewReader(body))
		req.Header.Set("X-GitHub-Event", "pull_request_review")
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("a delivery signed with another secret: %d, want 401", code)
	}
	time.Sleep(3 * time.Second)
	if p.prCard(add.Identifier).State != "review" {
		t.Fatalf("an unsigned delivery moved the card")
	}
	if code := post(secret); code != http.StatusAccepted {
		t.Fatalf("a signed delivery: %d, want 202", code)
	}
	if p2 := p.waitPrompt(add.Identifier, 2); !strings.Contains(p2, "Rename the hook.") {
		t.Fatalf("attempt 2's prompt lacks the review:\n%s", p2)
	}
}
