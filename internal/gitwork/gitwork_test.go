package gitwork

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plainGit runs git the way a person would (a human's clone), outside the
// package's runner.
func plainGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.com",
		"GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRemote is a bare repository with one commit on main holding files
// (name → content).
func newRemote(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	plainGit(t, root, "init", "--bare", "-q", "-b", "main", remote)
	work := filepath.Join(root, "seed")
	plainGit(t, root, "clone", "-q", remote, work)
	plainGit(t, work, "checkout", "-q", "-b", "main")
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plainGit(t, work, "add", "-A")
	plainGit(t, work, "commit", "-q", "-m", "seed")
	plainGit(t, work, "push", "-q", "origin", "main")
	return remote
}

func remoteRef(t testing.TB, remote, branch string) string {
	t.Helper()
	out := plainGit(t, remote, "for-each-ref", "--format=%(objectname)", "refs/heads/"+branch)
	return out
}

func open(t testing.TB, remote, mirrors string) *Mirror {
	t.Helper()
	m, err := Open(Config{Repo: remote}, mirrors, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorktreeMadeThenReusedAttemptsBuildOnEachOther(t *testing.T) {
	ctx := context.Background()
	remote := newRemote(t, map[string]string{"README.md": "hello\n"})
	m := open(t, remote, filepath.Join(t.TempDir(), "git"))
	dir := filepath.Join(t.TempDir(), "ws", "DRV-1")

	tree, created, err := m.Worktree(ctx, dir, "drover/drv-1-fix")
	if err != nil || !created {
		t.Fatalf("first Worktree: created %v, %v", created, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "hello\n" {
		t.Fatalf("the worktree does not hold the base's file: %q", b)
	}
	mark, _ := tree.Head(ctx)
	write(t, dir, "a.txt", "one\ntwo\n")
	sha, committed, err := tree.CommitAll(ctx, "DRV-1: fix (run r1)")
	if err != nil || !committed || sha == mark {
		t.Fatalf("CommitAll: %s %v %v", sha, committed, err)
	}
	ch, err := tree.Changes(ctx, mark)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Commits) != 1 || ch.Commits[0] != sha || ch.Files != 1 || ch.Insertions != 2 || ch.Deletions != 0 || ch.Dirty || !ch.Changed() {
		t.Fatalf("changes after the first attempt: %+v", ch)
	}
	if got := plainGit(t, dir, "log", "-1", "--format=%an <%ae>|%s"); got != "drover <drover@localhost>|DRV-1: fix (run r1)" {
		t.Fatalf("drover's commit: %q", got)
	}

	if n, err := tree.Unpushed(ctx); err != nil || n != 1 {
		t.Fatalf("Unpushed before any push: %d %v", n, err)
	}
	if err := tree.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := tree.Unpushed(ctx); err != nil || n != 0 {
		t.Fatalf("Unpushed after the push: %d %v", n, err)
	}

	// The retry: same directory, same branch, the first attempt's work there.
	tree2, created, err := m.Worktree(ctx, dir, "drover/drv-1-fix")
	if err != nil || created {
		t.Fatalf("second Worktree: created %v, %v", created, err)
	}
	if h, _ := tree2.Head(ctx); h != sha {
		t.Fatalf("the retry starts at %s, not the first attempt's %s", h, sha)
	}

	// A deleted workspace: the stale registration is pruned, the branch kept.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	tree3, created, err := m.Worktree(ctx, dir, "drover/drv-1-fix")
	if err != nil || !created {
		t.Fatalf("Worktree after the directory was deleted: created %v, %v", created, err)
	}
	if h, _ := tree3.Head(ctx); h != sha {
		t.Fatalf("the remade worktree starts at %s, not at the branch's %s", h, sha)
	}
}

func TestNothingChangedAndDirtyTree(t *testing.T) {
	ctx := context.Background()
	remote := newRemote(t, map[string]string{"a.txt": "1\n2\n3\n"})
	m := open(t, remote, t.TempDir())
	dir := filepath.Join(t.TempDir(), "DRV-2")
	tree, _, err := m.Worktree(ctx, dir, "drover/drv-2")
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := tree.Head(ctx)
	sha, committed, err := tree.CommitAll(ctx, "nothing")
	if err != nil || committed || sha != mark {
		t.Fatalf("CommitAll of a clean tree: %s %v %v", sha, committed, err)
	}
	ch, err := tree.Changes(ctx, mark)
	if err != nil || ch.Changed() || ch.Files != 0 || len(ch.Commits) != 0 || ch.Branch != "drover/drv-2" {
		t.Fatalf("a clean attempt's changes: %+v %v", ch, err)
	}
	// The agent commits (commit: agent) part and leaves a file behind.
	write(t, dir, "a.txt", "1\n3\n")
	plainGit(t, dir, "commit", "-q", "-am", "agent's commit")
	write(t, dir, "left.txt", "x\n")
	ch, err = tree.Changes(ctx, mark)
	if err != nil || len(ch.Commits) != 1 || ch.Files != 1 || ch.Deletions != 1 || ch.Insertions != 0 || !ch.Dirty {
		t.Fatalf("changes of an agent's commit and a dirty tree: %+v %v", ch, err)
	}
}

func TestSecondNodeBuildsOnThePushedBranch(t *testing.T) {
	ctx := context.Background()
	remote := newRemote(t, map[string]string{"a.txt": "a\n"})
	nodeA := open(t, remote, filepath.Join(t.TempDir(), "a"))
	treeA, _, err := nodeA.Worktree(ctx, filepath.Join(t.TempDir(), "DRV-3"), "drover/drv-3")
	if err != nil {
		t.Fatal(err)
	}
	write(t, treeA.Dir(), "b.txt", "b\n")
	shaA, _, err := treeA.CommitAll(ctx, "attempt 1")
	if err != nil {
		t.Fatal(err)
	}
	if err := treeA.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if got := remoteRef(t, remote, "drover/drv-3"); got != shaA {
		t.Fatalf("the remote branch is %q after the push, want %s", got, shaA)
	}
	nodeB := open(t, remote, filepath.Join(t.TempDir(), "b"))
	treeB, created, err := nodeB.Worktree(ctx, filepath.Join(t.TempDir(), "DRV-3"), "drover/drv-3")
	if err != nil || !created {
		t.Fatal(created, err)
	}
	if h, _ := treeB.Head(ctx); h != shaA {
		t.Fatalf("node B starts at %s, not at the pushed %s", h, shaA)
	}
	write(t, treeB.Dir(), "c.txt", "c\n")
	shaB, _, _ := treeB.CommitAll(ctx, "attempt 2")
	if err := treeB.Push(ctx); err != nil {
		t.Fatalf("a fast-forward push from node B: %v", err)
	}
	// Node A again: its reused worktree catches up with node B's push.
	if err := nodeA.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	treeA2, created, err := nodeA.Worktree(ctx, treeA.Dir(), "drover/drv-3")
	if err != nil || created {
		t.Fatal(created, err)
	}
	if h, _ := treeA2.Head(ctx); h != shaB {
		t.Fatalf("node A's reused worktree is at %s, not at node B's %s", h, shaB)
	}
}

func TestPushRejectedWhenSomeoneElsePushed(t *testing.T) {
	ctx := context.Background()
	remote := newRemote(t, map[string]string{"a.txt": "a\n"})
	m := open(t, remote, t.TempDir())
	tree, _, err := m.Worktree(ctx, filepath.Join(t.TempDir(), "DRV-4"), "drover/drv-4")
	if err != nil {
		t.Fatal(err)
	}
	// A human pushes to the card's branch first.
	human := filepath.Join(t.TempDir(), "human")
	plainGit(t, filepath.Dir(human), "clone", "-q", remote, human)
	plainGit(t, human, "checkout", "-q", "-b", "drover/drv-4")
	write(t, human, "h.txt", "human\n")
	plainGit(t, human, "add", "-A")
	plainGit(t, human, "commit", "-q", "-m", "a human's commit")
	plainGit(t, human, "push", "-q", "origin", "drover/drv-4")
	before := remoteRef(t, remote, "drover/drv-4")

	write(t, tree.Dir(), "b.txt", "b\n")
	local, _, err := tree.CommitAll(ctx, "drover's")
	if err != nil {
		t.Fatal(err)
	}
	err = tree.Push(ctx)
	var rej *PushRejected
	if !errors.As(err, &rej) {
		t.Fatalf("Push over a human's commit: %v, want *PushRejected", err)
	}
	if rej.Remote != before || rej.Local != local || rej.Branch != "drover/drv-4" {
		t.Fatalf("PushRejected: %+v (remote %s, local %s)", rej, before, local)
	}
	if after := remoteRef(t, remote, "drover/drv-4"); after != before {
		t.Fatalf("the remote branch moved from %s to %s", before, after)
	}
	if Transport(err) {
		t.Fatal("a refused push is not a transport failure")
	}
}

func TestUnreachableRepository(t *testing.T) {
	ctx := context.Background()
	mirrors := t.TempDir()
	m, err := Open(Config{Repo: filepath.Join(t.TempDir(), "missing.git")}, mirrors, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	err = m.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "missing.git") || !Transport(err) {
		t.Fatalf("Sync of a missing repository: %v (transport %v)", err, Transport(err))
	}
	if _, err := os.Stat(m.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed first Sync left a mirror behind: %v", err)
	}
	// A https URL with nothing behind it fails without asking for a password.
	m, _ = Open(Config{Repo: "http://127.0.0.1:9/none.git", TokenEnv: "TOK"}, mirrors, append(os.Environ(), "TOK=s3cret-token"))
	err = m.Sync(ctx)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Sync of an unreachable URL: %v", err)
	}
}

func TestTokenNeverOnTheCommandLineOrInFiles(t *testing.T) {
	env := gitEnv([]string{"PATH=/bin", "TOK=s3cret", "GIT_DIR=/elsewhere"}, "https://example.com/o/r.git", "TOK")
	joined := strings.Join(env, "\n")
	if strings.Contains(joined, "s3cret") || !strings.Contains(joined, "GIT_CONFIG_KEY_3=http.https://example.com/o/r.git.extraHeader") {
		t.Fatalf("the token is not carried as an encoded header: %s", joined)
	}
	if strings.Contains(joined, "GIT_DIR") {
		t.Fatal("an operator's GIT_DIR reaches git")
	}
	if strings.Contains(strings.Join(gitEnv([]string{"TOK=s3cret"}, "git@example.com:o/r.git", "TOK"), "\n"), "extraHeader") {
		t.Fatal("a token header on an ssh repository")
	}
}

func TestCheckNamesTheFieldAndTheFix(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
		want  string
	}{
		{Config{}, "repo", "is required"},
		{Config{Repo: "-upload-pack=x"}, "repo", "not a repository address"},
		{Config{Repo: "r", Commit: "both"}, "commit", `"both" is not one of drover, agent`},
		{Config{Repo: "r", Base: "ma..in"}, "base", "not a branch name"},
		{Config{Repo: "r", Branch: "{{ card.nope }}"}, "branch", "nope"},
		{Config{Repo: "r", Author: "nobody"}, "author", "Name <email>"},
		{Config{Repo: "r", TokenEnv: "ghp_abc def"}, "token_env", "variable name"},
		{Config{Repo: "https://x-access-token:ghp_SECRET@github.com/o/r.git"}, "repo", "password or token"},
		{Config{Repo: "r", Branch: "work/{{ card.title }}"}, "branch", "does not name the card"},
	} {
		ps := Check(tc.cfg)
		if len(ps) != 1 || ps[0].Field != tc.field || !strings.Contains(ps[0].Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want one problem on %s saying %q", tc.cfg, ps, tc.field, tc.want)
		}
	}
	if ps := Check(Config{Repo: "https://github.com/o/r.git", Commit: "agent", Base: "main", Author: "Bot <bot@x.io>", TokenEnv: "GH_TOKEN"}); len(ps) != 0 {
		t.Errorf("a good config: %v", ps)
	}
}
