// Package gitwork gives each card a git worktree on a branch of its own,
// made from one shared mirror of the repository per drover directory, and
// tells what an attempt changed there. It runs the real git; it knows
// nothing of the dispatcher, the store or the forge (pull requests live in
// package forge).
//
// The seam (the dispatcher uses only these):
//
//	m, err := gitwork.Open(cfg, mirrorsDir, env)   // checks cfg, no I/O
//	err = m.Sync(ctx)                              // clone or fetch the mirror
//	branch, err := gitwork.BranchName(cfg.Branch, card)
//	t, created, err := m.Worktree(ctx, dir, branch) // make or reuse the card's worktree
//	mark, err := t.Head(ctx)                        // before the agent runs
//	sha, committed, err := t.CommitAll(ctx, msg)    // what the agent left uncommitted
//	ch, err := t.Changes(ctx, mark)                 // after the attempt
//	err = t.Push(ctx)                               // *PushRejected when someone else pushed
package gitwork

import (
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Config is workspace.git in WORKFLOW.md.
type Config struct {
	// Repo is the repository: a URL (https, ssh, file) or a local path.
	Repo string `json:"repo" yaml:"repo"`
	// Base is the branch cards branch from and pull requests target;
	// "" is the remote's default branch.
	Base string `json:"base,omitempty" yaml:"base"`
	// Branch is the branch name template (Liquid, card.* variables);
	// "" is DefaultBranch. The rendered name is made safe (BranchName).
	Branch string `json:"branch,omitempty" yaml:"branch" cfg:"verbatim"`
	// TokenEnv names the variable holding an HTTPS token for Repo (never
	// the token itself); "" uses git's own credentials.
	TokenEnv string `json:"token_env,omitempty" yaml:"token_env"`
	// Push is when the branch is pushed: PushOnSuccess (default: after a
	// verified success), PushEveryAttempt (also after an attempt that
	// failed but committed, so its work is on the remote for a human to
	// read) or PushNever (nothing leaves the machine; no pull request).
	Push string `json:"push,omitempty" yaml:"push"`
	// Commit is who commits an attempt's work: CommitDrover (default,
	// drover commits what the agent left) or CommitAgent.
	Commit string `json:"commit,omitempty" yaml:"commit"`
	// ChangeRequired: a clean exit that changed nothing is not done
	// (kind no_changes). nil is true; a card can say otherwise with
	// spec.change_required: false.
	ChangeRequired *bool `json:"change_required,omitempty" yaml:"change_required"`
	// Author is the identity of drover's commits, "Name <email>";
	// "" is DefaultAuthor.
	Author string `json:"author,omitempty" yaml:"author"`
}

// Who commits.
const (
	CommitDrover = "drover"
	CommitAgent  = "agent"
)

// When the branch is pushed.
const (
	PushOnSuccess    = "on_success"
	PushEveryAttempt = "every_attempt"
	PushNever        = "never"
)

// DefaultBranch is the branch name template when workspace.git.branch is
// empty: the card's identifier and title, made safe by BranchName.
const DefaultBranch = "drover/{{ card.identifier }}-{{ card.title }}"

// DefaultAuthor signs drover's own commits.
const DefaultAuthor = "drover <drover@localhost>"

// Changes is what one attempt did to the card's branch; it is
// board.Changes (the run's changes field), so the store and the API carry
// it without knowing git.
type Changes = board.Changes

// PushRejected is Push's error when the remote branch holds commits this
// worktree does not have (someone else pushed): drover never force-pushes
// over them.
type PushRejected struct {
	Branch string
	Remote string // the remote's commit
	Local  string // ours
	At     time.Time
}

func (e *PushRejected) Error() string {
	return "push of " + e.Branch + " refused: the remote branch is at " + short(e.Remote) + ", which " + short(e.Local) + " does not contain (someone else pushed)"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
