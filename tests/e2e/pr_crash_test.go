package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
)

// Exactly one pull request per card when a node dies between the push and
// the pull request, when two nodes share the board, and whatever the
// card's title; a repository that cannot be fetched is workspace_setup.

// failPulls makes GitHub answer every POST /pulls with a 502 until Up.
func failPulls(gh *fake.Server) {
	gh.Inject(fake.Fault{Status: http.StatusBadGateway, Body: `{"message":"Server Error"}`,
		Match: func(r fake.Route) bool {
			return r.Method == "POST" && strings.HasSuffix(strings.SplitN(r.Path, "?", 2)[0], "/pulls")
		}})
}

// SIGKILL after the push, while GitHub refuses to open the pull request:
// the outbox holds the effect (channel forge, key pull:CARD:BRANCH), and
// after a restart exactly one pull request is opened.
func TestPullRequestOpenedOnceAcrossSIGKILL(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		p := newPREnv(t, prOpts{backend: backend})
		failPulls(p.gh)
		p.start()
		add := p.addCard("Add a greeting")
		branch := prBranch(add, "add-a-greeting")
		eventually(t, 40*time.Second, "the push and a refused POST /pulls", func() bool {
			return p.branchSHA(branch) != "" && p.gh.Count("POST /pulls") >= 1
		})
		var rows []outboxRow
		p.jsonOf(&rows, "outbox", "ls")
		key := "pull:" + add.ID + ":" + branch
		found := false
		for _, r := range rows {
			if r.Key == key && r.Channel == "forge" && r.Event == "pull_open" && r.CardID == add.ID {
				found = true
			}
		}
		if !found {
			t.Errorf("no pending forge row %q (pull_open) in the outbox: %+v", key, rows)
		}
		p.kill(syscall.SIGKILL)
		p.gh.Up()
		p.start()
		c := p.waitPR(add.Identifier, 40*time.Second, "review")
		time.Sleep(2 * time.Second) // room for a second pull request to appear
		if prs := pullsOf(p.gh, branch); len(prs) != 1 || created(p.gh) != 1 || prs[0].Number != c.PullRequest.Number {
			t.Fatalf("%d pull requests of %s (%d created), the card has %+v; want exactly one", len(prs), branch, created(p.gh), c.PullRequest)
		}
	})
}

// Two nodes on one PostgreSQL, several cards: one pull request per card,
// and each merge moves its card to done once.
func TestPullRequestOnePerCardWithTwoNodes(t *testing.T) {
	p := newPREnv(t, prOpts{backend: testkit.Postgres, node: "n1"})
	n2 := p.sibling("n2")
	var cards []card
	for i := range 6 {
		cards = append(cards, p.addCard(fmt.Sprintf("Add greeting %d", i)))
	}
	p.start()
	n2.start()
	prs := map[string]int{}
	for i, c := range cards {
		got := p.waitPR(c.Identifier, 60*time.Second, "review")
		branch := prBranch(c, fmt.Sprintf("add-greeting-%d", i))
		if got.PullRequest.Branch != branch {
			t.Fatalf("%s's pull request is of %q, want %q", c.Identifier, got.PullRequest.Branch, branch)
		}
		prs[c.Identifier] = got.PullRequest.Number
	}
	time.Sleep(2 * time.Second)
	for i, c := range cards {
		branch := prBranch(c, fmt.Sprintf("add-greeting-%d", i))
		if got := pullsOf(p.gh, branch); len(got) != 1 || got[0].Number != prs[c.Identifier] {
			t.Errorf("%s: %d pull requests of %s, want its one (#%d)", c.Identifier, len(got), branch, prs[c.Identifier])
		}
	}
	if n := created(p.gh); n != len(cards) {
		t.Errorf("GitHub created %d pull requests for %d cards", n, len(cards))
	}
	for _, c := range cards {
		p.gh.MergePull(prs[c.Identifier], "bob")
	}
	p.allIn(40*time.Second, "done", cards)
	time.Sleep(2 * time.Second) // both nodes poll again
	for _, c := range cards {
		n := 0
		for _, ev := range p.events(c.Identifier) {
			if ev.Type == "pr_merged" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s has %d pr_merged events, want 1", c.Identifier, n)
		}
	}
}

// Hostile titles make valid, distinct branches, one pull request each.
func TestPullRequestHostileTitles(t *testing.T) {
	p := newPREnv(t, prOpts{maxConc: 3})
	titles := []string{
		`Say "ship it" and 'done'`,
		"../../etc/passwd",
		"Grüße, 日本語 ✓ — naïve café",
		strings.Repeat("a very long title ", 17), // 306 characters
		"--force --delete -rf",
		"refs/heads/main.lock @{-1} ~^: ?*[",
		"; rm -rf ~ $(whoami) `id`",
	}
	var cards []card
	for _, title := range titles {
		cards = append(cards, p.addCard(title))
	}
	p.start()
	branches := map[string]string{}
	for _, c := range cards {
		got := p.waitPR(c.Identifier, 60*time.Second, "review")
		b := got.PullRequest.Branch
		if other, dup := branches[b]; dup {
			t.Errorf("%s and %s share branch %q", other, c.Identifier, b)
		}
		branches[b] = c.Identifier
		if !strings.HasPrefix(b, "drover/"+strings.ToLower(c.Identifier)) || len(b) > 100 || strings.Contains(b, "..") || strings.HasPrefix(b, "-") {
			t.Errorf("%s (%q): branch %q", c.Identifier, c.Title, b)
		}
		humanGit(t, p.dir, "check-ref-format", "refs/heads/"+b)
		if p.branchSHA(b) == "" {
			t.Errorf("%s: branch %q is not on the remote", c.Identifier, b)
		}
		if prs := pullsOf(p.gh, b); len(prs) != 1 || prs[0].Number != got.PullRequest.Number {
			t.Errorf("%s: %d pull requests of %q", c.Identifier, len(prs), b)
		}
	}
	if n := p.gh.Count("POST /pulls"); n != len(titles) {
		t.Errorf("POST /pulls %d times for %d cards", n, len(titles))
	}
}

// A repository that cannot be fetched (gone after drover started): the
// card's run is workspace_setup, naming the repository; no pull request.
func TestPullRequestRepositoryUnfetchable(t *testing.T) {
	p := newPREnv(t, prOpts{})
	p.start()
	time.Sleep(500 * time.Millisecond) // serve has read WORKFLOW.md
	if err := os.Rename(p.remote, p.remote+".gone"); err != nil {
		t.Fatal(err)
	}
	add := p.addCard("Add a greeting")
	var rs []run
	eventually(t, 30*time.Second, "a finished run", func() bool {
		rs = p.runs(add.Identifier)
		return len(rs) > 0 && rs[len(rs)-1].Kind != ""
	})
	r := rs[len(rs)-1]
	if r.Kind != "workspace_setup" || !strings.Contains(r.Error, p.remote) {
		t.Fatalf("the run: kind %q, error %q; want workspace_setup naming %s", r.Kind, r.Error, p.remote)
	}
	if n := p.gh.Count("POST /pulls"); n != 0 {
		t.Errorf("POST /pulls %d times for a repository that could not be fetched", n)
	}
}
