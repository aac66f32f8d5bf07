package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/testkit"
)

// The git workspace through the built binary: workspace.git points at a
// local bare repository, a command agent edits files (or does not), and
// drover commits, records, pushes, calls no_changes and refuses to push
// over a human's commit.

// humanGit runs git as a person would, in dir.
func humanGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=h@example.com", "GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=h@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// runChanges is the run JSON's changes.
type runChanges struct {
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
	Kind    string `json:"kind"`
	Changes *struct {
		Branch      string   `json:"branch"`
		Head        string   `json:"head"`
		Commits     []string `json:"commits"`
		Files       int      `json:"files"`
		Insertions  int      `json:"insertions"`
		Dirty       bool     `json:"dirty"`
		CommittedBy string   `json:"committed_by"`
		Pushed      string   `json:"pushed"`
	} `json:"changes"`
}

// newGitEnv is an installation whose WORKFLOW.md has workspace.git on a
// fresh bare repository (returned) and the default prompt, and whose agent
// keeps each prompt in prompts/ and acts on words of the card's title:
// "Add" writes a file, "Race" fails its first attempt after writing one.
func newGitEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.side = filepath.Join(e.dir, "side.log")
	remote := filepath.Join(e.dir, "remote.git")
	humanGit(t, e.dir, "init", "--bare", "-q", "-b", "main", remote)
	seed := filepath.Join(e.dir, "seed")
	humanGit(t, e.dir, "clone", "-q", remote, seed)
	humanGit(t, seed, "checkout", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("seed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	humanGit(t, seed, "add", "-A")
	humanGit(t, seed, "commit", "-q", "-m", "seed")
	humanGit(t, seed, "push", "-q", "origin", "main")

	e.writeFile("WORKFLOW.md", testkit.NewWorkflow().
		Set("agents", "default: script\nprofiles:\n  script: {kind: command, command: ./agent.sh, prompt: stdin}").
		Set("policy", "backoff: {base: 100ms, max: 300ms, jitter: 0}\nkinds:\n  unknown: {tiers: [3s]}").
		Set("dispatch", "poll_interval: 200ms\nlease: 3s\nmax_concurrent: 2").
		Set("hooks", "timeout: 10s\nbefore_run: test -e .git && test -f README.md").
		Set("workspace", "root: .drover/workspaces\ncleanup: never\ngit:\n  repo: ./remote.git\n  base: main").
		Set("server", "port: 0").Prompt(prompt.DefaultPrompt).String())
	script := `#!/bin/sh
mkdir -p "` + e.dir + `/prompts"
p="` + e.dir + `/prompts/$DROVER_CARD_IDENTIFIER-$DROVER_ATTEMPT.txt"
cat > "$p"
case "$(grep -m1 'You are working on' "$p")" in
*Add*) echo "greeting from $DROVER_CARD_IDENTIFIER" > greeting.txt ;;
*Race*) echo "attempt $DROVER_ATTEMPT" > race.txt; [ "$DROVER_ATTEMPT" = 1 ] && { echo "simulated failure" >&2; exit 1; } ;;
esac
echo "finished"
`
	if err := os.WriteFile(filepath.Join(e.dir, "agent.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if e.serve != nil {
			e.kill(syscall.SIGKILL)
		}
		if t.Failed() {
			e.dumpLogs()
		}
	})
	return e, remote
}

func (e *env) gitRuns(id string) []runChanges {
	e.t.Helper()
	var rs []runChanges
	e.jsonOf(&rs, "runs", id)
	return rs
}

func (e *env) waitState(id string, states ...string) card {
	e.t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		c := e.card(id)
		for _, s := range states {
			if c.State == s {
				return c
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s is in %s, not %v, after 40s", id, c.State, states)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func TestGitWorkspaceThroughTheBinary(t *testing.T) {
	e, remote := newGitEnv(t)
	e.start()

	// A card whose agent edits a file ends in review, its branch pushed
	// with drover's commit holding the file.
	add := e.addCard("Add a greeting")
	think := e.addCard("Think it over")
	c := e.waitState(add.Identifier, "review", "blocked")
	if c.State != "review" {
		t.Fatalf("%s ended in %s: %+v", c.Identifier, c.State, c.BlockReason)
	}
	rs := e.gitRuns(add.Identifier)
	ch := rs[len(rs)-1].Changes
	branch := "drover/" + strings.ToLower(add.Identifier) + "-add-a-greeting"
	if ch == nil || ch.Branch != branch || len(ch.Commits) != 1 || ch.Files != 1 || ch.Pushed == "" || ch.CommittedBy != ch.Head {
		t.Fatalf("the run's changes: %+v", ch)
	}
	if got := humanGit(t, remote, "rev-parse", "refs/heads/"+branch); got != ch.Head {
		t.Fatalf("the remote branch is at %s, want drover's %s", got, ch.Head)
	}
	if got := humanGit(t, remote, "show", ch.Head+":greeting.txt"); got != "greeting from "+add.Identifier {
		t.Fatalf("the pushed file: %q", got)
	}
	if got := humanGit(t, remote, "log", "-1", "--format=%an %s", ch.Head); got != "drover "+add.Identifier+": Add a greeting" {
		t.Fatalf("drover's commit: %q", got)
	}
	if out := e.ok("card", "show", add.Identifier); !strings.Contains(out, branch+": 1 commit, 1 file (+1 -0)") || !strings.Contains(out, "pushed ") {
		t.Fatalf("card show does not say what the run changed:\n%s", out)
	}

	// A card whose agent changes nothing: no_changes, and the next prompt
	// says so.
	c = e.waitState(think.Identifier, "blocked")
	rs = e.gitRuns(think.Identifier)
	if len(rs) < 2 || rs[0].Kind != "no_changes" {
		t.Fatalf("%s's runs: %+v", think.Identifier, rs)
	}
	p1, _ := os.ReadFile(filepath.Join(e.dir, "prompts", think.Identifier+"-1.txt"))
	p2, _ := os.ReadFile(filepath.Join(e.dir, "prompts", think.Identifier+"-2.txt"))
	const said = "The last attempt ended without changing anything on the branch"
	if strings.Contains(string(p1), said) || !strings.Contains(string(p2), said) {
		t.Fatalf("prompt 1 %q\nprompt 2 %q", p1, p2)
	}
	if c.BlockReason == nil || !strings.Contains(c.BlockReason.What, "no_changes") {
		t.Fatalf("%s blocked with %+v", think.Identifier, c.BlockReason)
	}

	// A human pushes to the card's branch between its attempts: drover's
	// push is refused, the card blocked, the human's commit stays.
	race := e.addCard("Race a human")
	raceBranch := "drover/" + strings.ToLower(race.Identifier) + "-race-a-human"
	deadline := time.Now().Add(30 * time.Second)
	for {
		if rs := e.gitRuns(race.Identifier); len(rs) > 0 && rs[0].Kind == "unknown" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the race card's first attempt did not fail")
		}
		time.Sleep(100 * time.Millisecond)
	}
	human := filepath.Join(e.dir, "human")
	humanGit(t, e.dir, "clone", "-q", remote, human)
	humanGit(t, human, "checkout", "-q", "-b", raceBranch)
	if err := os.WriteFile(filepath.Join(human, "human.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	humanGit(t, human, "add", "-A")
	humanGit(t, human, "commit", "-q", "-m", "a human's commit")
	humanGit(t, human, "push", "-q", "origin", raceBranch)
	theirs := humanGit(t, remote, "rev-parse", "refs/heads/"+raceBranch)

	c = e.waitState(race.Identifier, "blocked", "review")
	r := c.BlockReason
	if c.State != "blocked" || r == nil || r.Kind != "push_rejected" || r.What != "someone else pushed to "+raceBranch ||
		!strings.Contains(r.Where, theirs) || !strings.Contains(r.How, "drover card resume "+race.Identifier) {
		t.Fatalf("%s: %s %+v", race.Identifier, c.State, r)
	}
	if got := humanGit(t, remote, "rev-parse", "refs/heads/"+raceBranch); got != theirs {
		t.Fatalf("the remote branch moved from the human's %s to %s", theirs, got)
	}
	rs = e.gitRuns(race.Identifier)
	if last := rs[len(rs)-1]; last.Kind != "push_rejected" || last.Changes == nil || last.Changes.Pushed != "" || len(last.Changes.Commits) != 1 {
		t.Fatalf("the rejected run: %+v %+v", last, last.Changes)
	}
}
