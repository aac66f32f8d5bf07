package gitwork

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// Mirror is the shared bare copy of one repository in drover's directory,
// from which every card's worktree is made.
type Mirror struct {
	cfg  Config
	repo string // cfg.Repo, a local path made absolute
	dir  string // the bare repository
	lock string // its lock file
	run  runner
}

// Problem is one thing wrong with a Config: Field is its key under
// workspace.git (e.g. "commit"), Msg says what is wrong and the fix.
type Problem struct {
	Field string
	Msg   string
}

func (p Problem) Error() string { return "workspace.git." + p.Field + ": " + p.Msg }

var (
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	authorRe  = regexp.MustCompile(`^([^<>\n]+?)\s*<([^<>\s]+)>$`)
	schemeURL = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`)
)

// Check returns every problem of cfg (no I/O): the repository is set, the
// base is a branch name git accepts, the template compiles, commit is one
// of drover or agent, the author is "Name <email>", token_env is a
// variable's name.
func Check(cfg Config) []Problem {
	var ps []Problem
	switch {
	case strings.TrimSpace(cfg.Repo) == "":
		ps = append(ps, Problem{"repo", "is required: the repository's URL (https://…, ssh://…, git@host:owner/name) or a local path"})
	case strings.HasPrefix(cfg.Repo, "-") || strings.ContainsAny(cfg.Repo, "\x00\n\r"):
		ps = append(ps, Problem{"repo", fmt.Sprintf("%q is not a repository address; write a URL or a path", cfg.Repo)})
	}
	if u, err := url.Parse(cfg.Repo); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			ps = append(ps, Problem{"repo", "holds a password or token in its URL, which would reach logs, run records and the process list; remove it and name the variable that holds it in workspace.git.token_env"})
		}
	}
	if cfg.Base != "" && !ValidBranch(cfg.Base) {
		ps = append(ps, Problem{"base", fmt.Sprintf("%q is not a branch name git accepts; write one like main", cfg.Base)})
	}
	if cfg.Branch != "" {
		if err := checkTemplate(cfg.Branch); err != nil {
			ps = append(ps, Problem{"branch", err.Error() + " (e.g. " + DefaultBranch + ")"})
		}
	}
	switch cfg.Commit {
	case "", CommitDrover, CommitAgent:
	default:
		ps = append(ps, Problem{"commit", fmt.Sprintf("%q is not one of %s, %s", cfg.Commit, CommitDrover, CommitAgent)})
	}
	switch cfg.Push {
	case "", PushOnSuccess, PushEveryAttempt, PushNever:
	default:
		ps = append(ps, Problem{"push", fmt.Sprintf("%q is not one of %s, %s, %s", cfg.Push, PushOnSuccess, PushEveryAttempt, PushNever)})
	}
	if cfg.Author != "" && !authorRe.MatchString(cfg.Author) {
		ps = append(ps, Problem{"author", fmt.Sprintf("%q is not \"Name <email>\"; write e.g. %q", cfg.Author, DefaultAuthor)})
	}
	if cfg.TokenEnv != "" && !envName.MatchString(cfg.TokenEnv) {
		ps = append(ps, Problem{"token_env", fmt.Sprintf("%q is not a variable name; name the variable that holds the token (e.g. GITHUB_TOKEN), never the token", cfg.TokenEnv)})
	}
	return ps
}

// Open checks cfg and returns its mirror under mirrorsDir (nothing is read
// or written yet: Sync does). env is the environment git may draw from
// ("KEY=value", as os.Environ), where cfg.TokenEnv is looked up.
func Open(cfg Config, mirrorsDir string, env []string) (*Mirror, error) {
	if ps := Check(cfg); len(ps) > 0 {
		return nil, ps[0]
	}
	if mirrorsDir == "" {
		return nil, errors.New("gitwork: no directory for the mirrors")
	}
	repo := cfg.Repo
	if IsLocalPath(repo) {
		abs, err := filepath.Abs(repo)
		if err != nil {
			return nil, Problem{"repo", err.Error()}
		}
		repo = abs
	}
	name := mirrorName(repo)
	return &Mirror{cfg: cfg, repo: repo, dir: filepath.Join(mirrorsDir, name+".git"),
		lock: filepath.Join(mirrorsDir, name+".lock"), run: runner{env: gitEnv(env, repo, cfg.TokenEnv), repo: repo}}, nil
}

// IsLocalPath reports whether repo is a path on this machine: not a URL
// and not scp-like host:path.
func IsLocalPath(repo string) bool {
	if schemeURL.MatchString(repo) {
		return false
	}
	colon, slash := strings.Index(repo, ":"), strings.Index(repo, "/")
	return colon < 0 || (slash >= 0 && slash < colon)
}

// mirrorName is a directory name for repo: readable, and unique by a hash.
func mirrorName(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	base := strings.TrimSuffix(strings.TrimRight(repo, "/"), ".git")
	parts := strings.FieldsFunc(base, func(r rune) bool { return r == '/' || r == ':' || r == '\\' })
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return slugify(strings.Join(parts, "-"), 40, "repo") + "-" + hex.EncodeToString(sum[:4])
}

// Repo is the repository as the mirror fetches it (a local path absolute).
func (m *Mirror) Repo() string { return m.repo }

// Dir is the mirror's bare repository.
func (m *Mirror) Dir() string { return m.dir }

// withLock runs f holding the mirror's lock: one fetch or worktree change
// at a time, across goroutines and processes of one machine.
func (m *Mirror) withLock(f func() error) error {
	if err := os.MkdirAll(filepath.Dir(m.lock), 0o755); err != nil {
		return err
	}
	fh, err := os.OpenFile(m.lock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN) }()
	return f()
}

// Sync makes the mirror (the first time) or fetches it, pruning branches
// the remote deleted, and learns the remote's default branch.
func (m *Mirror) Sync(ctx context.Context) error {
	err := m.withLock(func() error {
		if _, err := os.Stat(filepath.Join(m.dir, "HEAD")); err != nil {
			return m.create(ctx)
		}
		if _, err := m.run.git(ctx, m.dir, "config", "remote.origin.url", m.repo); err != nil {
			return err
		}
		return m.fetch(ctx, m.dir)
	})
	if err != nil {
		return fmt.Errorf("fetching %s: %w", m.repo, err)
	}
	return nil
}

// create makes the bare mirror beside its place and moves it there once
// its first fetch worked, so a half-made mirror is never used.
func (m *Mirror) create(ctx context.Context) error {
	tmp := m.dir + ".new"
	_ = os.RemoveAll(tmp)
	if _, err := m.run.git(ctx, "", "init", "--bare", "-q", tmp); err != nil {
		return err
	}
	for _, kv := range [][2]string{{"remote.origin.url", m.repo}, {"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"}} {
		if _, err := m.run.git(ctx, tmp, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	if err := m.fetch(ctx, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, m.dir)
}

func (m *Mirror) fetch(ctx context.Context, dir string) error {
	if _, err := m.run.git(ctx, dir, "fetch", "--prune", "--quiet", "origin"); err != nil {
		return err
	}
	if m.cfg.Base == "" {
		if _, err := m.run.git(ctx, dir, "remote", "set-head", "origin", "--auto"); err != nil {
			return fmt.Errorf("the repository's default branch is unknown (is it empty? push a base branch, or set workspace.git.base): %w", err)
		}
		return nil
	}
	if _, err := m.run.git(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+m.cfg.Base+"^{commit}"); err != nil {
		return fmt.Errorf("the repository has no branch %q (workspace.git.base)", m.cfg.Base)
	}
	return nil
}

// baseRef is the remote-tracking ref cards branch from.
func (m *Mirror) baseRef(ctx context.Context) (string, error) {
	if m.cfg.Base != "" {
		return "refs/remotes/origin/" + m.cfg.Base, nil
	}
	out, err := m.run.git(ctx, m.dir, "symbolic-ref", "refs/remotes/origin/HEAD")
	if err != nil {
		return "", fmt.Errorf("the mirror of %s does not know the default branch (Sync first): %w", m.repo, err)
	}
	return strings.TrimSpace(out), nil
}

// BaseBranch is the branch cards start from: workspace.git.base, else the
// remote's default branch as the last Sync found it.
func (m *Mirror) BaseBranch(ctx context.Context) (string, error) {
	ref, err := m.baseRef(ctx)
	return strings.TrimPrefix(ref, "refs/remotes/origin/"), err
}
