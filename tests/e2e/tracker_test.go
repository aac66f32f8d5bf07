package e2e_test

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	lfake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
)

// drover serve against the local GitHub fake with sim agents settles every
// issue truthfully, and the fake's log shows the tracker reflecting each
// outcome: ready → in progress → review, or blocked with a comment, or a
// question answered by a comment on the issue.
func TestServeSettlesGitHubIssues(t *testing.T) {
	gh := fake.New("acme", "app")
	gh.Token = "ghp_test"
	t.Cleanup(gh.Close)
	spec := func(s string) string { return "Do the thing.\n\n```drover\n" + s + "\n```\n" }
	ok := gh.AddIssue("Clean success", spec(`{"sim":["succeeded"],"sim_delay":"50ms"}`))
	flaky := gh.AddIssue("Flaky, then success", spec(`{"sim":["provider_unavailable","succeeded"],"sim_delay":"50ms"}`))
	fails := gh.AddIssue("Keeps failing", spec(`{"sim":["agent_failed"],"sim_delay":"50ms"}`))
	bad := gh.AddIssue("Spec is not JSON", spec(`{"sim": [`))
	asks := gh.AddIssue("Asks a question", spec(`{"sim":["input_required","succeeded"],"sim_question":"Which region?","sim_delay":"50ms"}`))
	pr := gh.AddPullRequest("A pull request")
	t.Setenv("GH_TEST_TOKEN", "ghp_test")
	w := wf{Default: "sim", Policy: "  max_attempts: 2\n  kinds:\n    provider_unavailable: {tiers: [100ms]}\n",
		Tracker: "kind: github\nendpoint: " + gh.URL + "\napi_key: $GH_TEST_TOKEN\nrepo: acme/app\n"}
	e := newEnv(t, w, "", testkit.SQLite)
	e.start()
	labelled := func(n int, l string) func() bool {
		return func() bool { return slices.Contains(gh.Issue(n).Labels, l) }
	}
	eventually(t, 30*time.Second, "#1 in review", labelled(ok, "drover:review"))
	eventually(t, 30*time.Second, "#2 in review", labelled(flaky, "drover:review"))
	eventually(t, 30*time.Second, "#3 blocked", labelled(fails, "drover:blocked"))
	eventually(t, 30*time.Second, "#4 blocked", labelled(bad, "drover:blocked"))
	eventually(t, 30*time.Second, "#5 awaiting input", labelled(asks, "drover:awaiting-input"))
	eventually(t, 30*time.Second, "the question on #5", func() bool { return len(gh.Comments(asks)) == 1 })
	gh.PersonComments(asks, "alice", "eu-west-1")
	eventually(t, 30*time.Second, "#5 in review after the answer", labelled(asks, "drover:review"))

	for _, c := range []struct {
		n    int
		want string
	}{{fails, "gave up"}, {bad, "not valid JSON"}} {
		cs := gh.Comments(c.n)
		if len(cs) != 1 || !strings.Contains(cs[0].Body, c.want) || !strings.Contains(cs[0].Body, "drover card resume") {
			t.Errorf("#%d comments = %+v, want one saying %q and how to continue", c.n, cs, c.want)
		}
	}
	// #1's moves in order: in progress, then review.
	var moves []string
	for _, r := range gh.Log() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/issues/1/labels") {
			moves = append(moves, r.Body)
		}
	}
	if len(moves) != 2 || !strings.Contains(moves[0], "drover:running") || !strings.Contains(moves[1], "drover:review") {
		t.Errorf("#1 label writes = %q, want running then review", moves)
	}
	for _, r := range gh.Log() {
		if strings.Contains(r.Path, "/issues/6") {
			t.Errorf("the pull request was touched: %v", r)
		}
	}
	_ = pr
	e.kill(syscall.SIGTERM)
	var cards []card
	e.jsonOf(&cards, "card", "ls")
	states := map[string]string{}
	for _, c := range cards {
		states[c.Title] = c.State
	}
	want := map[string]string{"Clean success": "review", "Flaky, then success": "review", "Keeps failing": "blocked",
		"Spec is not JSON": "blocked", "Asks a question": "review"}
	if len(cards) != 5 {
		t.Fatalf("cards = %v, want one per issue (5), none for the pull request", states)
	}
	for title, st := range want {
		if states[title] != st {
			t.Errorf("%q settled in %q, want %q", title, states[title], st)
		}
	}
	if out := e.cli().OK("card", "show", "DRV-1"); !strings.Contains(out, "issue:       github acme/app#1 (https://github.com/acme/app/issues/1)") {
		t.Errorf("card show does not link the issue:\n%s", out)
	}
}

// A GitHub outage of several poll intervals while cards run penalises no
// card: they settle as their agents say, the outage is logged once, and the
// tracker catches up when it is back.
func TestServeGitHubOutageReportedOnce(t *testing.T) {
	gh := fake.New("acme", "app")
	t.Cleanup(gh.Close)
	n := gh.AddIssue("Runs through an outage", "```drover\n{\"sim\":[\"succeeded\"],\"sim_delay\":\"1500ms\"}\n```")
	t.Setenv("GH_TEST_TOKEN", "x")
	w := wf{Default: "sim", Tracker: "kind: github\nendpoint: " + gh.URL + "\napi_key: $GH_TEST_TOKEN\nrepo: acme/app\n"}
	e := newEnv(t, w, "", testkit.SQLite)
	e.start()
	eventually(t, 30*time.Second, "#1 in progress", func() bool { return slices.Contains(gh.Issue(n).Labels, "drover:running") })
	gh.Down(-1)
	time.Sleep(2 * time.Second) // ten poll intervals of 200ms; the agent finishes meanwhile
	var cards []card
	e.jsonOf(&cards, "card", "ls")
	if len(cards) != 1 || cards[0].State != "review" {
		t.Fatalf("during the outage the card is %+v, want review (its agent succeeded)", cards)
	}
	gh.Up()
	eventually(t, 60*time.Second, "#1 shows review after the outage", func() bool { return slices.Contains(gh.Issue(n).Labels, "drover:review") })
	logPath := e.serve.log
	e.kill(syscall.SIGTERM)
	raw, _ := os.ReadFile(logPath)
	if c := strings.Count(string(raw), "tracker unreachable; no card is touched"); c != 1 {
		t.Errorf("the polling outage was logged %d times, want once", c)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, "tracker unreachable") || strings.Contains(line, "tracker reachable again") {
			if c := strings.Count(line, " tracker=github"); c != 1 {
				t.Errorf("the line names the tracker %d times, want once: %s", c, line)
			}
		}
	}
	if c := strings.Count(string(raw), "tracker unreachable for projections"); c > 1 {
		t.Errorf("the projection outage was logged %d times, want at most once", c)
	}
}

// drover serve against the local Linear fake: Todo → In Progress → In
// Review on success, a comment with the reason on a give-up, a question
// answered by a comment in Linear.
func TestServeSettlesLinearIssues(t *testing.T) {
	ln := lfake.New("eng-0a1b2c")
	ln.APIKey = "lin_api_e2e"
	t.Cleanup(ln.Close)
	spec := func(s string) string { return "Do it.\n\n```drover\n" + s + "\n```\n" }
	ok := ln.AddIssue("Clean success", spec(`{"sim":["succeeded"],"sim_delay":"50ms"}`), "Todo")
	fails := ln.AddIssue("Keeps failing", spec(`{"sim":["agent_failed"],"sim_delay":"50ms"}`), "Todo")
	asks := ln.AddIssue("Asks", spec(`{"sim":["input_required","succeeded"],"sim_question":"Which team?","sim_delay":"50ms"}`), "Todo")
	ln.AddIssue("Not yet", "", "Backlog")
	t.Setenv("LINEAR_API_KEY", "lin_api_e2e") // Symphony's default when api_key is absent
	w := wf{Default: "sim", Policy: "  max_attempts: 2\n",
		Tracker: "kind: linear\nendpoint: " + ln.URL + "\nprovider: {project_slug: eng-0a1b2c}\nactive_states: [Todo, In Progress]\n"}
	e := newEnv(t, w, "", testkit.SQLite)
	e.start()
	eventually(t, 30*time.Second, "ENG-1 in review", func() bool { return ln.Issue(ok).State == "In Review" })
	eventually(t, 30*time.Second, "ENG-2's give-up comment", func() bool {
		cs := ln.Comments(fails)
		return len(cs) == 1 && strings.Contains(cs[0].Body, "gave up")
	})
	eventually(t, 30*time.Second, "ENG-3's question", func() bool { return len(ln.Comments(asks)) == 1 })
	ln.PersonComments(asks, "Ada", "The platform team.")
	eventually(t, 30*time.Second, "ENG-3 in review after the answer", func() bool { return ln.Issue(asks).State == "In Review" })
	e.kill(syscall.SIGTERM)
	var cards []card
	e.jsonOf(&cards, "card", "ls")
	if len(cards) != 3 {
		t.Fatalf("%d cards, want 3 (the Backlog issue is not active)", len(cards))
	}
}
