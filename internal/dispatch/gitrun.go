package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/gitwork"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/workspace"
)

// A card's git workspace (workspace.git): its worktree is made from the
// shared mirror before the hooks run; after the agent drover commits what
// it left (unless the agent commits), records what the attempt changed on
// the run, calls a clean exit that changed nothing no_changes, and after a
// verified success pushes the branch, never by force.

// gitTimeout bounds each git step of an attempt (fetch, worktree, commit,
// push).
const gitTimeout = 5 * time.Minute

// gitSpace is the git side of a prepared workspace (nil without git).
type gitSpace struct {
	repo   string
	mirror string // the mirror's bare repository
	tree   *gitwork.Tree
	mark   string // HEAD before the agent ran
	base   string // the base branch ("" when unknown)
	push   string // workspace.git.push
}

// worktree makes (or reuses) the card's worktree at the directory
// workspace.Ensure gives it, after fetching the mirror. Its errors name the
// repository; they are workspace_setup.
func (r *runner) worktree(ctx context.Context, a attempt, cfg *config.Config) (string, bool, *gitSpace, error) {
	g := cfg.Workspace.Git
	dir, _, err := workspace.Ensure(cfg.Workspace.Root, a.card.Identifier)
	if err != nil {
		return "", false, nil, fmt.Errorf("workspace %s: %w", cfg.Workspace.Root, err)
	}
	m, err := gitwork.Open(g.Config, r.gitDir, os.Environ())
	if err != nil {
		return "", false, nil, fmt.Errorf("workspace.git: %w", err)
	}
	gctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	if err := m.Sync(gctx); err != nil {
		return "", false, nil, fmt.Errorf("workspace.git.repo %s: %w", m.Repo(), err)
	}
	branch, err := gitwork.BranchName(g.Branch, a.card)
	if err != nil {
		return "", false, nil, err
	}
	tree, created, err := m.Worktree(gctx, dir, branch)
	if err != nil {
		return "", false, nil, err
	}
	a.log.Info("git worktree", "repo", m.Repo(), "branch", branch, "created", created)
	base, _ := m.BaseBranch(gctx)
	return dir, created, &gitSpace{repo: m.Repo(), mirror: m.Dir(), tree: tree, base: base, push: cfg.Workspace.Git.Push}, nil
}

// gitBinds is what a sandboxed agent needs to run git in its worktree: the
// mirror, which holds the worktree's index and the branch's objects.
func gitBinds(gs *gitSpace) []sandbox.Bind {
	if gs == nil {
		return nil
	}
	return []sandbox.Bind{{Path: gs.mirror, RW: true}}
}

// markHead notes the branch's commit before the agent runs.
func (r *runner) markHead(ctx context.Context, gs *gitSpace) error {
	if gs == nil {
		return nil
	}
	mark, err := gs.tree.Head(ctx)
	if err != nil {
		return fmt.Errorf("workspace.git.repo %s: reading the branch %s: %w", gs.repo, gs.tree.Branch(), err)
	}
	gs.mark = mark
	return nil
}

// gitAfter runs after the agent exits: drover's commit of what it left,
// the attempt's changes, and no_changes for a clean exit that changed
// nothing on a card that needs a change.
func (r *runner) gitAfter(a attempt, cfg *config.Config, gs *gitSpace, cls policy.Classification) (policy.Classification, *board.Changes) {
	if gs == nil || gs.mark == "" {
		return cls, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), gitTimeout)
	defer cancel()
	g := cfg.Workspace.Git
	sha, committed := "", false
	if g.Commit != gitwork.CommitAgent {
		var err error
		if sha, committed, err = gs.tree.CommitAll(ctx, commitMessage(a)); err != nil {
			a.log.Warn("could not commit what the agent left; the tree stays dirty", "branch", gs.tree.Branch(), "err", err)
		}
	}
	ch, err := gs.tree.Changes(ctx, gs.mark)
	if err != nil {
		a.log.Warn("could not read what the attempt changed", "branch", gs.tree.Branch(), "err", err)
		return cls, nil
	}
	if committed {
		ch.CommittedBy = sha
	}
	a.log.Info("attempt changes", "branch", ch.Branch, "commits", len(ch.Commits), "files", ch.Files, "dirty", ch.Dirty)
	if cls.Kind != policy.KindSucceeded || ch.Changed() || !changeRequired(g, a.card) {
		return cls, &ch
	}
	if n, err := gs.tree.Unpushed(ctx); err == nil && n > 0 {
		// An earlier attempt's work, never pushed (it was stopped before):
		// this attempt found it done. The push after verify carries it.
		a.log.Info("nothing new, but the branch holds unpushed commits of an earlier attempt", "branch", ch.Branch, "commits", n)
		return cls, &ch
	}
	if pr := a.card.PullRequest; g.PullRequests != nil && (pr == nil || pr.State != board.PullOpen) {
		// The branch's work is done and pushed, but no pull request is
		// open for it (a crash after the push, a retry on another node,
		// a failed attempt pushed by every_attempt, a closed PR reopened
		// with drover card resume): this success opens it.
		if n, err := gs.tree.AheadOfBase(ctx); err == nil && n > 0 {
			a.log.Info("nothing new, but the branch holds work no open pull request shows", "branch", ch.Branch, "commits", n)
			return cls, &ch
		}
	}
	if rep, known := r.report(a); known && policy.ApplyReport(cls, rep).Kind != policy.KindSucceeded {
		return cls, &ch // the agent said it is blocked or asks: that decides
	}
	return policy.Classification{Kind: policy.KindNoChange, Source: policy.GitSource + ":no_changes",
		Message: fmt.Sprintf("the agent exited cleanly but left branch %s as it was (no commit, no changed file since %s); the card needs a change (spec.change_required: false says it does not)",
			ch.Branch, shortSHA(gs.mark))}, &ch
}

// gitPush pushes the branch after a verified success: a refused push
// (someone else pushed) is push_rejected, a transport failure network,
// anything else workspace_setup.
func (r *runner) gitPush(a attempt, gs *gitSpace, cls policy.Classification, ch *board.Changes) policy.Classification {
	if gs == nil || ch == nil || gs.push == gitwork.PushNever {
		return cls
	}
	if cls.Kind != policy.KindSucceeded {
		r.pushFailed(a, gs, ch)
		return cls
	}
	if _, stopped := r.stoppedBy(a); stopped {
		return cls
	}
	if rep, known := r.report(a); known && policy.ApplyReport(cls, rep).Kind != policy.KindSucceeded {
		return cls
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), gitTimeout)
	defer cancel()
	branch := gs.tree.Branch()
	err := gs.tree.Push(ctx)
	var rej *gitwork.PushRejected
	switch {
	case err == nil:
		ch.Pushed, ch.BaseBranch = ch.Head, gs.base
		a.log.Info("pushed", "repo", gs.repo, "branch", branch, "head", ch.Head)
		return cls
	case errors.As(err, &rej):
		a.log.Warn("push refused: someone else pushed", "branch", branch, "remote", rej.Remote, "local", rej.Local)
		return policy.Classification{Kind: policy.KindPushRejected, Source: policy.GitSource + ":push", Message: rej.Error(),
			Reason: &board.BlockReason{
				What:  "someone else pushed to " + branch,
				Where: fmt.Sprintf("repository %s, branch %s: the remote branch is at %s, drover's commit is %s", gs.repo, branch, rej.Remote, rej.Local),
				How: fmt.Sprintf("merge or rebase %s yourself (drover never force-pushes), or delete the remote branch; then drover card resume %s",
					branch, a.card.Identifier),
			}}
	}
	kind := policy.KindWorkspaceSetup
	if gitwork.Transport(err) {
		kind = policy.KindNetwork
	}
	return policy.Classification{Kind: kind, Source: policy.GitSource + ":push",
		Message: fmt.Sprintf("push of branch %s to %s failed: %v", branch, gs.repo, err)}
}

// changeRequired: workspace.git.change_required (default true), unless the
// card's spec says change_required: false.
func changeRequired(g *config.Git, c board.Card) bool {
	var spec struct {
		ChangeRequired *bool `json:"change_required"`
	}
	if len(c.Spec) > 0 && json.Unmarshal(c.Spec, &spec) == nil && spec.ChangeRequired != nil {
		return *spec.ChangeRequired
	}
	return g.ChangeRequired == nil || *g.ChangeRequired
}

// commitMessage names the card (identifier and title) and the run.
func commitMessage(a attempt) string {
	title := strings.Join(strings.Fields(a.card.Title), " ")
	if r := []rune(title); len(r) > 200 {
		title = string(r[:200]) + "…"
	}
	return fmt.Sprintf("%s: %s\n\nWhat the agent left in the workspace after attempt %d, committed by drover.\n\nDrover-Card: %s\nDrover-Run: %s\n",
		a.card.Identifier, title, a.run.Attempt, a.card.Identifier, a.run.ID)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// pushFailed is workspace.git.push: every_attempt after an attempt that did
// not succeed but left commits: its work goes to the remote branch for a
// human to read, and the attempt's verdict stands whatever the push says
// (a refused push is logged; the next success's push decides).
func (r *runner) pushFailed(a attempt, gs *gitSpace, ch *board.Changes) {
	if gs.push != gitwork.PushEveryAttempt || len(ch.Commits) == 0 {
		return
	}
	if _, stopped := r.stoppedBy(a); stopped {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), gitTimeout)
	defer cancel()
	if err := gs.tree.Push(ctx); err != nil {
		a.log.Warn("push of a failed attempt's work did not go through", "branch", gs.tree.Branch(), "err", err)
		return
	}
	ch.Pushed = ch.Head
	a.log.Info("pushed a failed attempt's work (workspace.git.push: every_attempt)", "branch", gs.tree.Branch(), "head", ch.Head)
}
