package config

import (
	"fmt"
	"strings"
)

// trackerSections are the commented tracker: sections drover init
// --tracker writes, after the board.
var trackerSections = map[string]string{
	TrackerGitHub: `# Cards come from the open issues of one GitHub repository (pull requests
# never). Each issue is mirrored into a card in the first eligible column;
# drover's store stays the source of truth for claims, budgets and decisions,
# and each move shows on the issue as a label (and a comment for blocks,
# give-ups and questions). A person's comment on an issue parked with a
# question is the answer. A closed issue cancels its card (a running agent
# stops). The card's spec is a fenced block of JSON in the issue body:
#     ` + "```drover" + `
#     {"sim": ["succeeded"]}
#     ` + "```" + `
# See docs/trackers/github.md: token scopes, what drover writes, what it never touches.
tracker:
  kind: github
  repo: owner/name                # the repository whose issues drover dispatches
  api_key: $GITHUB_TOKEN          # fine-grained token: Issues read and write, Metadata read
  # endpoint: https://api.github.com   # GitHub Enterprise Server: https://HOST/api/v3
  required_labels: []             # only issues carrying all of these, e.g. [agent]
  active_states: [open]           # "open" (any open issue) or label names (any of them)
  terminal_states: [closed]       # labels here also count as closed
  # blocked_by_pattern: '(?i)blocked by #(\d+)'   # a body saying "blocked by #12" waits on #12
  # webhook_secret: $GITHUB_WEBHOOK_SECRET        # POST /api/v1/webhooks/github syncs at once
  # roles:                        # how each column role shows; missing labels are created at start
  #   eligible:  {state: open}
  #   running:   {label: "drover:running"}
  #   parked:    {label: "drover:awaiting-input"}
  #   completed: {label: "drover:review"}
  #   blocked:   {label: "drover:blocked"}
  #   done:      {state: closed}

`,
	TrackerLinear: `# Cards come from one Linear project (Symphony's keys). Each issue in an
# active state is mirrored into a card in the first eligible column; drover's
# store stays the source of truth for claims, budgets and decisions, and each
# move shows as the workflow state tracker.roles names (and a comment for
# blocks, give-ups and questions). A person's comment on an issue parked with
# a question is the answer. An issue moved to a terminal state cancels its
# card (a running agent stops). The card's spec is a fenced block of JSON in
# the issue description:
#     ` + "```drover" + `
#     {"sim": ["succeeded"]}
#     ` + "```" + `
# See docs/trackers/linear.md: the API key, what drover writes, what it never touches.
tracker:
  kind: linear
  provider:
    project_slug: my-project-0123abcd   # the end of the project's URL
  # api_key: $LINEAR_API_KEY      # the default when api_key is absent, as in Symphony
  # endpoint: https://api.linear.app/graphql
  required_labels: []
  active_states: [Todo, In Progress]
  terminal_states: [Done, Canceled, Cancelled, Duplicate]
  # webhook_secret: $LINEAR_WEBHOOK_SECRET        # POST /api/v1/webhooks/linear syncs at once
  # roles:                        # workflow states by name, checked against the project at start
  #   running:   {state: In Progress}
  #   completed: {state: In Review}
  #   done:      {state: Done}
  #   blocked:   {state: Blocked}          # if your workflow has one (else: a comment only)
  #   parked:    {state: Needs Input}      # likewise

`,
}

// InitTemplateFor is InitTemplate with the tracker section of kind ("" or
// native: drover's own board).
func InitTemplateFor(kind string) (string, error) {
	if kind == "" || kind == TrackerNative {
		return InitTemplate, nil
	}
	sec, ok := trackerSections[kind]
	if !ok {
		return "", fmt.Errorf("--tracker: %q is not a tracker; use github or linear (or leave it out for drover's own board)", kind)
	}
	const anchor = "# Agent profiles."
	i := strings.Index(InitTemplate, anchor)
	return InitTemplate[:i] + sec + InitTemplate[i:], nil
}
