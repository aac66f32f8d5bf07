package config

import (
	"regexp"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/gitwork"
)

var ownerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)

// git checks workspace.git: gitwork's own checks under their keys, a local
// repository path made absolute against the file's directory, and the
// pull_request section's kind and repository.
func (d *decoder) git(g *Git, baseDir string) {
	if g == nil {
		return
	}
	if g.Repo != "" && gitwork.IsLocalPath(g.Repo) {
		g.Repo = resolvePath(g.Repo, baseDir)
	}
	for _, p := range gitwork.Check(g.Config) {
		d.errf("workspace.git."+p.Field, "%s", p.Msg)
	}
	pr := g.PullRequests
	if pr == nil {
		return
	}
	d.check(g.Push != gitwork.PushNever, "workspace.git.push",
		"never leaves no pushed branch to open workspace.git.pull_request from; use %s (the default) or %s, or remove workspace.git.pull_request", gitwork.PushOnSuccess, gitwork.PushEveryAttempt)
	if pr.Kind == "" {
		pr.Kind = "github"
	}
	d.check(pr.Kind == "github", "workspace.git.pull_request.provider", "%q is not one of github (the only forge drover opens pull requests on)", pr.Kind)
	d.check(ownerName.MatchString(pr.Repository), "workspace.git.pull_request.repo",
		"%q is not owner/name; write the GitHub repository, e.g. acme/widgets", pr.Repository)
	if pr.TokenEnv == "" {
		pr.TokenEnv = "GITHUB_TOKEN"
	}
	d.check(agent.IsEnvName(pr.TokenEnv), "workspace.git.pull_request.token_env",
		"%q is not a variable name; name the variable that holds the token (e.g. GITHUB_TOKEN), never the token", pr.TokenEnv)
	d.check(pr.PollInterval == 0 || pr.PollInterval >= 1e9, "workspace.git.pull_request.poll_interval",
		"%s is shorter than 1s; GitHub's rate limit wants 1m or more (0 is %s)", pr.PollInterval, forge.DefaultPollInterval)
}
