package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/pullflow"
	"github.com/drover-dev/drover/internal/store"
)

// gitT runs a person's git (no user config) in dir.
func gitT(t *testing.T, dir string, args ...string) string {
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

// bareRemote is a bare repository with README.md on main.
func bareRemote(t *testing.T) string {
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	gitT(t, root, "init", "--bare", "-q", "-b", "main", remote)
	seed := filepath.Join(root, "seed")
	gitT(t, root, "clone", "-q", remote, seed)
	gitT(t, seed, "checkout", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("seed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "-q", "-m", "seed")
	gitT(t, seed, "push", "-q", "origin", "main")
	return remote
}

// gitAgent is a command agent that keeps each prompt in prompts/ and acts
// on words in the card's body: "edit" writes a file, "race" has a human
// push to the card's branch while the attempt runs.
func gitAgent(t *testing.T, dir, remote string) string {
	script := filepath.Join(dir, "agent.sh")
	body := `#!/bin/sh
p="` + dir + `/prompts/$DROVER_CARD_IDENTIFIER-$DROVER_ATTEMPT.txt"
mkdir -p "` + dir + `/prompts"
cat > "$p"
if grep -q race "$p"; then
  h=$(mktemp -d)
  export GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=Human GIT_AUTHOR_EMAIL=h@x GIT_COMMITTER_NAME=Human GIT_COMMITTER_EMAIL=h@x
  git clone -q "` + remote + `" "$h/c" && cd "$h/c" && git checkout -q -b "$(git -C "$DROVER_WORKSPACE" rev-parse --abbrev-ref HEAD)" &&
    echo human > human.txt && git add human.txt && git commit -qm human && git push -q origin HEAD && cd "$DROVER_WORKSPACE"
fi
if grep -q once "$p" && [ "$DROVER_ATTEMPT" = 1 ]; then
  echo "done once" > once.txt; exit 1
fi
if grep -q edit "$p"; then
  echo "work of attempt $DROVER_ATTEMPT" > agent.txt
fi
echo finished
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func gitWorld(t *testing.T) (*world, string) { return gitWorldPush(t, "") }

// gitWorldPush is gitWorld with workspace.git.push set to mode ("": unset).
func gitWorldPush(t *testing.T, mode string) (*world, string) {
	t.Helper()
	push := ""
	if mode != "" {
		push = ", push: " + mode
	}
	remote := bareRemote(t)
	w := newWorldFrom(t, worldWorkflow(5))
	script := gitAgent(t, w.dir, remote)
	w2 := newWorldFrom(t, worldWorkflow(5).
		Set("agents", "default: sh\nprofiles:\n  sh: {kind: command, command: "+script+"}").
		Set("workspace", "{root: "+filepath.Join(w.dir, "ws")+", git: {repo: "+remote+", base: main"+push+"}}").
		Set("hooks", "{before_run: 'test -e .git && test -f README.md'}").
		Prompt("{{ card.body }}\n{% if changes.branch != \"\" and changes.changed == false %}NOCHANGE on {{ changes.branch }}{% endif %}\n"))
	w2.dir = w.dir
	return w2, remote
}

func (w *world) addBody(title, body string) board.Card {
	w.t.Helper()
	c, err := w.ops.Add(context.Background(), operator.Input{Title: &title, Body: &body})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func prompts(t *testing.T, dir, ident string, attempt int) string {
	b, err := os.ReadFile(filepath.Join(dir, "prompts", fmt.Sprintf("%s-%d.txt", ident, attempt)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A card whose agent edits a file: drover commits it on the card's branch,
// records the changes on the run, pushes after the success and the card
// goes to review; the remote branch holds drover's commit with the file.
func TestGitWorkspaceCommitsPushesAndRecords(t *testing.T) {
	w, remote := gitWorld(t)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Add the greeting", "please edit")
	c = w.waitFor(c.ID, "review", func(c board.Card) bool { return c.State == "review" || c.State == "blocked" })
	if c.State != "review" {
		t.Fatalf("the card ended in %s: %+v", c.State, c.BlockReason)
	}
	runs := w.runs(c.ID)
	ch := runs[len(runs)-1].Changes
	branch := "drover/" + strings.ToLower(c.Identifier) + "-add-the-greeting"
	if ch == nil || ch.Branch != branch || len(ch.Commits) != 1 || ch.Files != 1 || ch.Insertions != 1 || ch.Dirty || ch.CommittedBy != ch.Head || ch.Pushed != ch.Head {
		t.Fatalf("the run's changes: %+v", ch)
	}
	if got := gitT(t, remote, "rev-parse", "refs/heads/"+branch); got != ch.Head {
		t.Fatalf("the remote branch is at %s, want drover's %s", got, ch.Head)
	}
	if got := gitT(t, remote, "show", ch.Head+":agent.txt"); got != "work of attempt 1" {
		t.Fatalf("the pushed commit's file: %q", got)
	}
	msg := gitT(t, remote, "log", "-1", "--format=%an|%B", ch.Head)
	if !strings.HasPrefix(msg, "drover|"+c.Identifier+": Add the greeting") || !strings.Contains(msg, runs[len(runs)-1].ID) {
		t.Fatalf("drover's commit message: %q", msg)
	}
	// Without workspace.git.pull_requests drover pushes and opens nothing.
	rows, err := w.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Channel == pullflow.Channel {
			t.Fatalf("a workflow without pull_requests queued %s %s", r.Channel, r.Event)
		}
	}
	if c.PullRequest != nil {
		t.Fatalf("a workflow without pull_requests records a pull request: %+v", c.PullRequest)
	}
}

// A card whose agent changes nothing: no_changes, counted and retried; the
// next prompt says so; at the cap the card gives up.
func TestGitWorkspaceNoChange(t *testing.T) {
	w, _ := gitWorld(t)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Think hard", "only think")
	c = w.waitFor(c.ID, "blocked", func(c board.Card) bool { return c.State == "blocked" || c.State == "review" })
	runs := w.runs(c.ID)
	if c.State != "blocked" || len(runs) != 3 || c.GaveUp == nil || !strings.Contains(c.GaveUp.Reason+c.BlockReason.What, "no_changes") {
		t.Fatalf("a card that never changes anything: %s, %d runs, %+v %+v", c.State, len(runs), c.GaveUp, c.BlockReason)
	}
	for _, r := range runs {
		if r.Kind != string(policy.KindNoChange) || !r.Counted || r.Changes == nil || r.Changes.Changed() {
			t.Fatalf("run %d: kind %s counted %v changes %+v", r.Attempt, r.Kind, r.Counted, r.Changes)
		}
	}
	if p := prompts(t, w.dir, c.Identifier, 1); strings.Contains(p, "NOCHANGE") {
		t.Fatalf("the first prompt says nothing changed: %q", p)
	}
	if p := prompts(t, w.dir, c.Identifier, 2); !strings.Contains(p, "NOCHANGE on "+runs[0].Changes.Branch) {
		t.Fatalf("the second prompt does not say the first attempt changed nothing: %q", p)
	}
	// A card that says no change is needed is done after a clean exit.
	raw := json.RawMessage(`{"change_required": false}`)
	title, body := "Only look", "only look"
	c2, err := w.ops.Add(context.Background(), operator.Input{Title: &title, Body: &body, Spec: &raw})
	if err != nil {
		t.Fatal(err)
	}
	if c2 = w.waitFor(c2.ID, "review", func(c board.Card) bool { return c.State == "review" || c.State == "blocked" }); c2.State != "review" {
		t.Fatalf("a card with change_required: false: %s %+v", c2.State, c2.BlockReason)
	}
}

// An attempt that did the work but failed before its push, then one that
// finds nothing left to do: not no_changes; the earlier commit is pushed.
func TestGitWorkspaceUnpushedWorkIsNotNoChange(t *testing.T) {
	w, remote := gitWorld(t)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Do it once", "do it once")
	c = w.waitFor(c.ID, "review", func(c board.Card) bool { return c.State == "review" || c.State == "blocked" })
	runs := w.runs(c.ID)
	if c.State != "review" || len(runs) != 2 {
		t.Fatalf("%s after %d runs: %+v", c.State, len(runs), c.BlockReason)
	}
	first, second := runs[0].Changes, runs[1].Changes
	if first == nil || len(first.Commits) != 1 || first.Pushed != "" || second == nil || len(second.Commits) != 0 || second.Pushed != first.Head {
		t.Fatalf("changes: first %+v, second %+v", first, second)
	}
	if got := gitT(t, remote, "show", "refs/heads/"+second.Branch+":once.txt"); got != "done once" {
		t.Fatalf("the pushed branch's file: %q", got)
	}
}

// Someone else pushes to the card's branch: drover's push is refused, the
// card is blocked with push_rejected, and the remote keeps their commit.
func TestGitWorkspacePushRejected(t *testing.T) {
	w, remote := gitWorld(t)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Race a human", "race and edit")
	c = w.waitFor(c.ID, "blocked", func(c board.Card) bool { return c.State == "blocked" || c.State == "review" })
	branch := "drover/" + strings.ToLower(c.Identifier) + "-race-a-human"
	r := c.BlockReason
	if c.State != "blocked" || r == nil || r.Kind != "push_rejected" || r.What != "someone else pushed to "+branch ||
		!strings.Contains(r.Where, remote) || !strings.Contains(r.How, "never force-pushes") || !strings.Contains(r.How, "drover card resume "+c.Identifier) {
		t.Fatalf("card %s, reason %+v", c.State, r)
	}
	if got := gitT(t, remote, "log", "-1", "--format=%an %s", "refs/heads/"+branch); got != "Human human" {
		t.Fatalf("the remote branch's head is %q, not the human's commit", got)
	}
	runs := w.runs(c.ID)
	if ch := runs[len(runs)-1].Changes; ch == nil || ch.Pushed != "" || len(ch.Commits) != 1 {
		t.Fatalf("the run's changes: %+v", ch)
	}
}

// A repository that cannot be fetched: workspace_setup naming it.
func TestGitWorkspaceUnreachable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.git")
	w := newWorldFrom(t, worldWorkflow(5).
		Set("agents", "default: sh\nprofiles:\n  sh: {kind: command, command: /bin/true}").
		Set("workspace", "{git: {repo: "+missing+"}}"))
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Anything", "x")
	c = w.waitFor(c.ID, "a workspace_setup run", func(c board.Card) bool {
		rs := w.runs(c.ID)
		return len(rs) > 0 && rs[0].Kind != ""
	})
	rs := w.runs(c.ID)
	if rs[0].Kind != string(policy.KindWorkspaceSetup) || !strings.Contains(rs[0].Error, missing) {
		t.Fatalf("run 1 of an unreachable repository: %s %q", rs[0].Kind, rs[0].Error)
	}
}

// workspace.git.push: never keeps every commit on the machine: the card
// reaches review, its run records its commit, the remote has no branch.
func TestGitWorkspacePushNever(t *testing.T) {
	w, remote := gitWorldPush(t, "never")
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Keep it local", "please edit")
	c = w.waitFor(c.ID, "review", func(c board.Card) bool { return c.State == "review" || c.State == "blocked" })
	runs := w.runs(c.ID)
	ch := runs[len(runs)-1].Changes
	if c.State != "review" || ch == nil || len(ch.Commits) != 1 || ch.Pushed != "" {
		t.Fatalf("card %s, changes %+v", c.State, ch)
	}
	if out, err := exec.Command("git", "-C", remote, "rev-parse", "--verify", "-q", "refs/heads/"+ch.Branch).CombinedOutput(); err == nil {
		t.Fatalf("push: never pushed %s: %s", ch.Branch, out)
	}
}

// workspace.git.push: every_attempt pushes a failed attempt's commit too
// (its verdict stands), then the success's.
func TestGitWorkspacePushEveryAttempt(t *testing.T) {
	w, remote := gitWorldPush(t, "every_attempt")
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	c := w.addBody("Try twice", "once edit")
	c = w.waitFor(c.ID, "review", func(c board.Card) bool { return c.State == "review" || c.State == "blocked" })
	runs := w.runs(c.ID)
	if c.State != "review" || len(runs) != 2 {
		t.Fatalf("card %s after %d runs", c.State, len(runs))
	}
	first, last := runs[0], runs[1]
	if first.Outcome == board.OutcomeSucceeded || first.Changes == nil || len(first.Changes.Commits) != 1 || first.Changes.Pushed != first.Changes.Head {
		t.Fatalf("the failed attempt: %s, changes %+v", first.Outcome, first.Changes)
	}
	if got := gitT(t, remote, "rev-parse", "refs/heads/"+last.Changes.Branch); got != last.Changes.Head {
		t.Fatalf("the remote branch is at %s, want the success's %s", got, last.Changes.Head)
	}
	if got := gitT(t, remote, "merge-base", "--is-ancestor", first.Changes.Head, last.Changes.Head); got != "" {
		t.Fatalf("the failed attempt's commit is not under the success's: %q", got)
	}
}
