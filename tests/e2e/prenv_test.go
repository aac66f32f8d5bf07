package e2e_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
)

// The harness of the pull request scenarios (pr_test.go): a drover
// installation whose workspace.git points at a local bare repository and
// whose workspace.git.pull_request points at the GitHub fake, a command
// agent that only edits a file (no git, no hook doing git), and the glue
// that tells the fake what drover pushed.

// prPoll is workspace.git.pull_request.poll_interval.
const prPoll = time.Second

// prToken is the token the fake wants and drover reads from GITHUB_TOKEN.
const prToken = "ghp_e2e_pull_requests"

// prAgent keeps each prompt it gets in prompts/ID-ATTEMPT.txt, waits
// while a file hold-ID exists (at most 30s: a test holds an attempt while
// it does something meanwhile) and appends a line to greeting.txt: every
// attempt changes the branch, and drover commits it. It never runs git.
const prAgent = `#!/bin/sh
mkdir -p "%[1]s/prompts"
cat > "%[1]s/prompts/$DROVER_CARD_IDENTIFIER-$DROVER_ATTEMPT.txt"
i=0
while [ -f "%[1]s/hold-$DROVER_CARD_IDENTIFIER" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo "hello from $DROVER_CARD_IDENTIFIER, attempt $DROVER_ATTEMPT" >> greeting.txt
echo "finished"
`

// prOpts are the parts of a pull request scenario that vary.
type prOpts struct {
	backend testkit.Backend // "" is SQLite
	checks  []string        // workspace.git.pull_request.required_checks
	node    string          // dispatch.node
	maxConc int             // dispatch.max_concurrent (default 2)
	api     bool            // serve the API (server.port on a free port)
	poll    time.Duration   // workspace.git.pull_request.poll_interval (0: prPoll)
	secret  string          // workspace.git.pull_request.webhook_secret
}

// prEnv is one installation with its remote and its GitHub.
type prEnv struct {
	*env
	gh     *fake.Server
	remote string // the bare repository drover pushes to
	opts   prOpts
}

// pullRef is the card's pull_request.
type pullRef struct {
	Number    int        `json:"number"`
	URL       string     `json:"url"`
	Branch    string     `json:"branch"`
	State     string     `json:"state"`
	HeadSHA   string     `json:"head_sha"`
	CheckedAt *time.Time `json:"checked_at"`
}

// prCard is a card as `drover card show --json` prints it, with its pull
// request.
type prCard struct {
	card
	PullRequest *pullRef `json:"pull_request"`
}

// newPREnv makes the remote (a bare repository with one commit on main),
// the GitHub fake for acme/app and the installation, and starts gluing
// pushes.
func newPREnv(t *testing.T, o prOpts) *prEnv {
	t.Helper()
	gh := fake.New("acme", "app")
	gh.Token = prToken
	t.Cleanup(gh.Close)
	e := &env{t: t, dir: t.TempDir(), extra: []string{"GITHUB_TOKEN=" + prToken}}
	e.side = filepath.Join(e.dir, "side.log")
	if o.backend == testkit.Postgres {
		e.dsn = testkit.DSN(t, o.backend)
	}
	p := &prEnv{env: e, gh: gh, remote: filepath.Join(e.dir, "remote.git"), opts: o}
	humanGit(t, e.dir, "init", "--bare", "-q", "-b", "main", p.remote)
	seed := filepath.Join(e.dir, "seed")
	humanGit(t, e.dir, "clone", "-q", p.remote, seed)
	humanGit(t, seed, "checkout", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("seed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	humanGit(t, seed, "add", "-A")
	humanGit(t, seed, "commit", "-q", "-m", "seed")
	humanGit(t, seed, "push", "-q", "origin", "main")
	p.install(e)
	t.Cleanup(func() {
		if e.serve != nil {
			e.kill(syscall.SIGKILL)
		}
		if t.Failed() {
			e.dumpLogs()
			t.Logf("---- GitHub fake ----\n%s", ghLog(gh))
		}
	})
	gluePushes(t, p.remote, gh)
	return p
}

// install writes WORKFLOW.md and agent.sh into e's directory.
func (p *prEnv) install(e *env) {
	e.t.Helper()
	o := p.opts
	if o.maxConc == 0 {
		o.maxConc = 2
	}
	checks := "[]"
	if len(o.checks) > 0 {
		checks = "[" + strings.Join(o.checks, ", ") + "]"
	}
	port := 0
	if o.api {
		port = freePort(e.t)
	}
	secret := ""
	if o.secret != "" {
		secret = "\n    webhook_secret: " + o.secret
	}
	node := ""
	if o.node != "" {
		node = "\nnode: " + o.node
	}
	e.writeFile("WORKFLOW.md", testkit.NewWorkflow().
		Set("agents", "default: script\nprofiles:\n  script: {kind: command, command: ./agent.sh, prompt: stdin}").
		Set("policy", "backoff: {base: 100ms, max: 300ms, jitter: 0}\nkinds:\n  unknown: {tiers: [3s]}").
		Set("dispatch", fmt.Sprintf("poll_interval: 200ms\nlease: 3s\nmax_concurrent: %d%s", o.maxConc, node)).
		Set("hooks", "timeout: 10s").
		Set("workspace", "root: .drover/workspaces\ncleanup: never\ngit:\n  repo: "+p.remote+"\n  base: main\n"+
			"  pull_request:\n    provider: github\n    repo: acme/app\n    endpoint: "+p.gh.URL+
			"\n    token_env: GITHUB_TOKEN\n    poll_interval: "+cmp.Or(o.poll, prPoll).String()+"\n    required_checks: "+checks+secret).
		Set("server", fmt.Sprintf("port: %d", port)).Prompt(prompt.DefaultPrompt).String())
	if err := os.WriteFile(filepath.Join(e.dir, "agent.sh"), []byte(fmt.Sprintf(prAgent, e.dir)), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

// sibling is a second node on p's store, remote and GitHub: its own
// directory (mirror, worktrees) and WORKFLOW.md with dispatch.node node.
func (p *prEnv) sibling(node string) *env {
	p.t.Helper()
	s := &env{t: p.t, dir: p.t.TempDir(), dsn: p.dsn, side: p.side, extra: p.extra}
	o := p.opts
	o.node = node
	(&prEnv{env: s, gh: p.gh, remote: p.remote, opts: o}).install(s)
	p.t.Cleanup(func() {
		if s.serve != nil {
			s.kill(syscall.SIGKILL)
		}
		if p.t.Failed() {
			s.dumpLogs()
		}
	})
	return s
}

// gluePushes stands in for GitHub seeing a push. The fake GitHub is not
// backed by the bare repository drover pushes to: without this, a pull
// request's head would be the fake's stand-in for a branch it was never
// told of, not the commit drover (or a human) pushed, and a check run
// reported on the pushed commit would concern no pull request. Every 100ms
// it reads the bare repository's branches and tells the fake of each one
// that moved (fake.Push), until the test ends.
func gluePushes(t *testing.T, remote string, gh *fake.Server) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		seen := map[string]string{}
		for ctx.Err() == nil {
			out, err := exec.CommandContext(ctx, "git", "--git-dir", remote, "for-each-ref",
				"--format=%(refname:lstrip=2) %(objectname)", "refs/heads/").Output()
			if err == nil {
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					branch, sha, ok := strings.Cut(l, " ")
					if ok && seen[branch] != sha {
						gh.Push(branch, sha)
						seen[branch] = sha
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// branchSHA is the bare repository's branch head ("" when it has none).
func (p *prEnv) branchSHA(branch string) string {
	out, err := exec.Command("git", "--git-dir", p.remote, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (p *prEnv) prCard(id string) prCard {
	p.t.Helper()
	var c prCard
	p.jsonOf(&c, "card", "show", id)
	return c
}

// apiCard is GET /api/v1/cards/{id} of the running serve (prOpts.api).
func (p *prEnv) apiCard(id string) prCard {
	p.t.Helper()
	resp, err := http.Get(serveAddr(p.t, p.env) + "/api/v1/cards/" + id)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var c prCard
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET /api/v1/cards/%s: %d %v", id, resp.StatusCode, err)
	}
	return c
}

// waitPR waits until card id is in one of states with its pull request
// recorded, and returns it.
func (p *prEnv) waitPR(id string, within time.Duration, states ...string) prCard {
	p.t.Helper()
	var c prCard
	eventually(p.t, within, fmt.Sprintf("%s in %v with its pull request", id, states), func() bool {
		c = p.prCard(id)
		for _, s := range states {
			if c.State == s && c.PullRequest != nil && c.PullRequest.Number > 0 {
				return true
			}
		}
		return false
	})
	return c
}

// headMoved waits until the fake's pull request n has sha as its head and
// the card says so too.
func (p *prEnv) waitHead(id string, n int, sha string) {
	p.t.Helper()
	eventually(p.t, 20*time.Second, fmt.Sprintf("PR #%d's head at %s on GitHub and on %s", n, sha, id), func() bool {
		c := p.prCard(id)
		return p.gh.Pull(n).HeadSHA == sha && c.PullRequest != nil && c.PullRequest.HeadSHA == sha
	})
}

// prompt is attempt's prompt as the agent got it ("" when it did not run).
func (p *prEnv) prompt(id string, attempt int) string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "prompts", fmt.Sprintf("%s-%d.txt", id, attempt)))
	return string(b)
}

// waitPrompt waits for attempt's prompt.
func (p *prEnv) waitPrompt(id string, attempt int) string {
	p.t.Helper()
	eventually(p.t, 30*time.Second, fmt.Sprintf("%s's attempt %d", id, attempt), func() bool { return p.prompt(id, attempt) != "" })
	return p.prompt(id, attempt)
}

// settled checks that card id stays in review for three poll intervals
// of the pull request without an attempt-th run: what sent it back
// (a review, a failed check of an older head) does not send it back again.
func (p *prEnv) settled(id string, attempt int, what string) {
	p.t.Helper()
	time.Sleep(prPoll*3 + prPoll/2)
	if c := p.prCard(id); c.State != "review" || p.prompt(id, attempt) != "" {
		p.t.Fatalf("%s sent %s back again: it is in %s, attempt %d ran: %v", what, id, c.State, attempt, p.prompt(id, attempt) != "")
	}
}

// created counts the pull requests GitHub created (POST /pulls answered
// 201), faulted and refused tries left out.
func created(gh *fake.Server) int {
	n := 0
	for _, r := range gh.Log() {
		if r.Method == "POST" && strings.HasSuffix(strings.SplitN(r.Path, "?", 2)[0], "/pulls") && r.Status == 201 {
			n++
		}
	}
	return n
}

// pullsOf are the fake's pull requests of branch.
func pullsOf(gh *fake.Server, branch string) []fake.Pull {
	var out []fake.Pull
	for _, pr := range gh.Pulls() {
		if pr.Head == branch {
			out = append(out, pr)
		}
	}
	return out
}

// eventIndex is the position of the first event of type typ (-1: none).
func eventIndex(evs []event, typ string) int {
	for i, ev := range evs {
		if ev.Type == typ {
			return i
		}
	}
	return -1
}

// says is everything an event tells a reader: actor, reason and data.
func says(ev event) string { return ev.Actor + " " + ev.Reason + " " + string(ev.Data) }

func ghLog(gh *fake.Server) string {
	var b strings.Builder
	for _, r := range gh.Log() {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// outboxRow is a row of `drover outbox ls --json`.
type outboxRow struct {
	Key      string          `json:"key"`
	Channel  string          `json:"channel"`
	Event    string          `json:"event"`
	CardID   string          `json:"card_id"`
	Attempts int             `json:"attempts"`
	Payload  json.RawMessage `json:"payload"`
}
