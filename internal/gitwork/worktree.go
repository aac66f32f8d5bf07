package gitwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Tree is one card's worktree on its branch.
type Tree struct {
	m      *Mirror
	dir    string
	branch string
}

// Dir is the worktree's directory; Branch its branch.
func (t *Tree) Dir() string    { return t.dir }
func (t *Tree) Branch() string { return t.branch }

// Worktree makes the card's worktree at dir on branch, or reuses the one
// already there (created false), so attempts build on each other. A new
// worktree starts from the card's branch as the mirror holds it: the local
// branch of an earlier attempt on this machine, else the pushed branch (an
// attempt on another node), else the base. A worktree whose directory was
// deleted is forgotten first (git worktree prune). Sync before.
func (m *Mirror) Worktree(ctx context.Context, dir, branch string) (*Tree, bool, error) {
	if !ValidBranch(branch) {
		return nil, false, fmt.Errorf("%q is not a branch name git accepts", branch)
	}
	t := &Tree{m: m, dir: dir, branch: branch}
	var created bool
	err := m.withLock(func() error {
		ok, err := t.reusable(ctx)
		if err != nil || ok {
			return err
		}
		created = true
		return t.add(ctx)
	})
	if err != nil {
		return nil, false, fmt.Errorf("worktree of %s for %s at %s: %w", m.repo, branch, dir, err)
	}
	if !created {
		if err := t.catchUp(ctx); err != nil {
			return nil, false, err
		}
	}
	return t, created, nil
}

// reusable: dir is already this mirror's worktree on branch. A directory
// that is something else is an error (drover does not delete what it did
// not make), except an empty one.
func (t *Tree) reusable(ctx context.Context) (bool, error) {
	entries, err := os.ReadDir(t.dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(entries) == 0 {
		return false, os.Remove(t.dir)
	}
	if _, err := os.Stat(filepath.Join(t.dir, ".git")); err != nil {
		return false, fmt.Errorf("the directory holds files but is not a git worktree; move them away or remove the directory")
	}
	common, err := t.m.run.git(ctx, t.dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false, err
	}
	if !sameDir(strings.TrimSpace(common), t.m.dir) {
		return false, fmt.Errorf("the directory is a git checkout of another repository (%s); remove it", strings.TrimSpace(common))
	}
	head, err := t.m.run.git(ctx, t.dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || strings.TrimSpace(head) != t.branch {
		return false, fmt.Errorf("the worktree is on %q, not on the card's branch %q; check out %s in it or remove it", strings.TrimSpace(head), t.branch, t.branch)
	}
	return true, nil
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func (t *Tree) add(ctx context.Context) error {
	r, md := t.m.run, t.m.dir
	if _, err := r.git(ctx, md, "worktree", "prune"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.dir), 0o755); err != nil {
		return err
	}
	local := t.m.sha(ctx, md, "refs/heads/"+t.branch)
	remote := t.m.sha(ctx, md, "refs/remotes/origin/"+t.branch)
	switch {
	case local != "":
		// An earlier attempt here; the pushed branch may have moved on
		// (an attempt on another node): follow it when that loses nothing.
		if remote != "" && remote != local && t.m.ancestor(ctx, md, local, remote) {
			if _, err := r.git(ctx, md, "update-ref", "refs/heads/"+t.branch, remote, local); err != nil {
				return err
			}
		}
		_, err := r.git(ctx, md, "worktree", "add", "--quiet", t.dir, t.branch)
		return err
	case remote != "":
		_, err := r.git(ctx, md, "worktree", "add", "--quiet", "--no-track", "-b", t.branch, t.dir, remote)
		return err
	}
	base, err := t.m.baseRef(ctx)
	if err != nil {
		return err
	}
	_, err = r.git(ctx, md, "worktree", "add", "--quiet", "--no-track", "-b", t.branch, t.dir, base)
	return err
}

// catchUp fast-forwards a reused, clean worktree to its pushed branch when
// that holds commits the worktree lacks and lacks none of its own (another
// node's attempt); anything else is left for Push to find.
func (t *Tree) catchUp(ctx context.Context) error {
	remote := t.m.sha(ctx, t.dir, "refs/remotes/origin/"+t.branch)
	head := t.m.sha(ctx, t.dir, "HEAD")
	if remote == "" || remote == head || head == "" || !t.m.ancestor(ctx, t.dir, head, remote) {
		return nil
	}
	if out, err := t.m.run.git(ctx, t.dir, "status", "--porcelain"); err != nil || out != "" {
		return err
	}
	_, err := t.m.run.git(ctx, t.dir, "merge", "--ff-only", "--quiet", remote)
	return err
}

// sha is the commit ref names in dir's repository ("" when none).
func (m *Mirror) sha(ctx context.Context, dir, ref string) string {
	out, err := m.run.git(ctx, dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// ancestor: a is b or one of its ancestors.
func (m *Mirror) ancestor(ctx context.Context, dir, a, b string) bool {
	_, err := m.run.git(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Head is the worktree's commit: mark it before the agent runs.
func (t *Tree) Head(ctx context.Context) (string, error) {
	out, err := t.m.run.git(ctx, t.dir, "rev-parse", "--verify", "HEAD^{commit}")
	return strings.TrimSpace(out), err
}

// CommitAll commits everything the agent left in the tree (new, changed
// and deleted files, as .gitignore allows) as Config.Author with msg, and
// returns the new commit; committed is false when there was nothing to
// commit (sha is then HEAD).
func (t *Tree) CommitAll(ctx context.Context, msg string) (sha string, committed bool, err error) {
	r := t.m.run
	if _, err := r.git(ctx, t.dir, "add", "--all"); err != nil {
		return "", false, err
	}
	if _, err := r.git(ctx, t.dir, "diff", "--cached", "--quiet"); err == nil {
		h, err := t.Head(ctx)
		return h, false, err
	}
	name, email := splitAuthor(t.m.cfg.Author)
	r.env = append(append([]string(nil), r.env...), "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	if _, err := r.git(ctx, t.dir, "commit", "--quiet", "--no-verify", "--allow-empty-message", "-m", msg); err != nil {
		return "", false, err
	}
	h, err := t.Head(ctx)
	return h, err == nil, err
}

func splitAuthor(a string) (string, string) {
	if m := authorRe.FindStringSubmatch(a); m != nil {
		return m[1], m[2]
	}
	m := authorRe.FindStringSubmatch(DefaultAuthor)
	return m[1], m[2]
}

// Changes is what happened on the branch since the commit since (Head
// before the attempt): the commits added, the files, lines added and
// removed between since and HEAD, and whether the tree is dirty.
func (t *Tree) Changes(ctx context.Context, since string) (Changes, error) {
	r := t.m.run
	head, err := t.Head(ctx)
	if err != nil {
		return Changes{}, err
	}
	ch := Changes{Branch: t.branch, Base: since, Head: head, Commits: []string{}}
	if since != head {
		out, err := r.git(ctx, t.dir, "rev-list", "--reverse", since+".."+head)
		if err != nil {
			return Changes{}, err
		}
		ch.Commits = append(ch.Commits, strings.Fields(out)...)
		out, err = r.git(ctx, t.dir, "diff", "--numstat", "-z", "--no-renames", since, head)
		if err != nil {
			return Changes{}, err
		}
		ch.Files, ch.Insertions, ch.Deletions = numstat(out)
	}
	st, err := r.git(ctx, t.dir, "status", "--porcelain")
	if err != nil {
		return Changes{}, err
	}
	ch.Dirty = strings.TrimSpace(st) != ""
	return ch, nil
}

// numstat sums git diff --numstat -z: "added\tdeleted\tpath\0" per file
// ("-" for a binary file's counts).
func numstat(out string) (files, ins, del int) {
	for _, rec := range strings.Split(out, "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) < 3 {
			continue
		}
		files++
		a, _ := strconv.Atoi(f[0])
		d, _ := strconv.Atoi(f[1])
		ins += a
		del += d
	}
	return files, ins, del
}

// Push pushes the branch to the repository, never by force: when the
// remote branch holds a commit HEAD does not contain (someone else pushed)
// the error is *PushRejected and the remote is left as it was.
func (t *Tree) Push(ctx context.Context) error {
	head, err := t.Head(ctx)
	if err != nil {
		return err
	}
	ref := "refs/heads/" + t.branch
	if err := t.compare(ctx, ref, head); err != nil {
		return err
	}
	if _, err := t.m.run.git(ctx, t.dir, "push", "--quiet", "--no-verify", "origin", head+":"+ref); err != nil {
		// Someone may have pushed between the look and the push.
		if rerr := t.compare(ctx, ref, head); rerr != nil {
			return rerr
		}
		return err
	}
	_, err = t.m.run.git(ctx, t.dir, "update-ref", "refs/remotes/origin/"+t.branch, head)
	return err
}

// compare reads the remote branch and returns *PushRejected when head does
// not contain it.
func (t *Tree) compare(ctx context.Context, ref, head string) error {
	r := t.m.run
	out, err := r.git(ctx, t.dir, "ls-remote", "origin", ref)
	if err != nil {
		return err
	}
	remote := ""
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == ref {
			remote = f[0]
		}
	}
	if remote == "" || remote == head {
		return nil
	}
	if t.m.sha(ctx, t.dir, remote) == "" {
		if _, err := r.git(ctx, t.dir, "fetch", "--quiet", "origin", "+"+ref+":refs/remotes/origin/"+t.branch); err != nil {
			return err
		}
	}
	if t.m.ancestor(ctx, t.dir, remote, head) {
		return nil
	}
	return &PushRejected{Branch: t.branch, Remote: remote, Local: head, At: time.Now()}
}

// Unpushed is the number of commits on the branch that the remote does not
// have yet: beyond the pushed branch, or beyond the base when it was never
// pushed (the work of an earlier attempt that did not get to its push).
func (t *Tree) Unpushed(ctx context.Context) (int, error) { return t.ahead(ctx, false) }

// AheadOfBase counts the commits of the branch that the base branch does
// not have, pushed or not: the card's work so far.
func (t *Tree) AheadOfBase(ctx context.Context) (int, error) { return t.ahead(ctx, true) }

func (t *Tree) ahead(ctx context.Context, ofBase bool) (int, error) {
	upto := "refs/remotes/origin/" + t.branch
	if ofBase || t.m.sha(ctx, t.dir, upto) == "" {
		base, err := t.m.baseRef(ctx)
		if err != nil {
			return 0, err
		}
		upto = base
	}
	out, err := t.m.run.git(ctx, t.dir, "rev-list", "--count", upto+"..HEAD")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}
