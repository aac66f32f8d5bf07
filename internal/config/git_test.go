package config

import (
	"testing"
	"time"
)

func TestWorkspaceGitDecodes(t *testing.T) {
	t.Setenv("GIT_TEST_PR_TOKEN", "ghp_from_env")
	cfg := mustParse(t, `---
workspace:
  git:
    repo: ../repo.git
    base: main
    branch: "work/{{ card.identifier }}"
    token_env: GH_TOKEN
    commit: agent
    change_required: false
    author: "Bot <bot@example.com>"
    pull_request:
      repo: acme/widgets
      api_key: $GIT_TEST_PR_TOKEN
      poll_interval: 2m
      required_checks: [test]
---
`)
	g := cfg.Workspace.Git
	if g == nil {
		t.Fatal("workspace.git not decoded")
	}
	if g.Repo != "/srv/repo.git" || g.Base != "main" || g.Branch != "work/{{ card.identifier }}" || g.TokenEnv != "GH_TOKEN" ||
		g.Commit != "agent" || g.ChangeRequired == nil || *g.ChangeRequired || g.Author != "Bot <bot@example.com>" {
		t.Fatalf("workspace.git: %+v", g.Config)
	}
	pr := g.PullRequests
	if pr == nil || pr.Kind != "github" || pr.Repository != "acme/widgets" || pr.TokenEnv != "GITHUB_TOKEN" || pr.APIKey != "ghp_from_env" ||
		pr.PollInterval != 2*time.Minute || len(pr.RequiredChecks) != 1 {
		t.Fatalf("workspace.git.pull_request: %+v", pr)
	}
	if mustParse(t, "---\nworkspace:\n  root: ws\n---\n").Workspace.Git != nil {
		t.Fatal("a workflow without workspace.git has one")
	}
	if g := mustParse(t, "---\nworkspace:\n  git:\n    repo: https://github.com/acme/w.git\n---\n").Workspace.Git; g.Repo != "https://github.com/acme/w.git" || g.PullRequests != nil {
		t.Fatalf("a URL is kept as written: %+v", g)
	}
}
