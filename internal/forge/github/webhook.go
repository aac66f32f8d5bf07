package github

// Webhooks: GitHub signs each delivery's body with the webhook's secret
// (X-Hub-Signature-256: sha256=<hex HMAC-SHA256>) and names its event in
// X-GitHub-Event. ParseEvent says which pull requests (and branches) an
// event concerns, so the dispatcher reads them at once instead of waiting
// for the next poll. Payload shapes: the webhook schemas of GitHub's
// OpenAPI description (webhook-pull-request-*, webhook-pull-request-review-*,
// webhook-pull-request-review-comment-*, webhook-check-run-*,
// webhook-check-suite-*) and docs.github.com "Webhook events and payloads".

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SignatureHeader is the header VerifySignature checks.
const SignatureHeader = "X-Hub-Signature-256"

// EventHeader names a delivery's event type.
const EventHeader = "X-GitHub-Event"

// VerifySignature checks header (the X-Hub-Signature-256 value) against
// the HMAC-SHA256 of body under secret, in constant time. An empty secret
// is an error: a webhook drover acts on is signed.
func VerifySignature(secret, body []byte, header string) error {
	if len(secret) == 0 {
		return errors.New("webhook secret is empty: set the secret the webhook was created with")
	}
	if header == "" {
		return errors.New(SignatureHeader + " is missing: the delivery is not signed (set a secret on the webhook)")
	}
	hexsum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return fmt.Errorf("%s: %q does not start with sha256=", SignatureHeader, trim(header))
	}
	got, err := hex.DecodeString(hexsum)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%s: %q is not a hex SHA-256", SignatureHeader, trim(header))
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return errors.New(SignatureHeader + " does not match the body: the delivery was not signed with this secret")
	}
	return nil
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Event is what a delivery concerns.
type Event struct {
	Type       string   `json:"type"`             // pull_request, check_run, …
	Action     string   `json:"action,omitempty"` // opened, submitted, completed, …
	Repository string   `json:"repository,omitempty"`
	Pulls      []int    `json:"pulls,omitempty"`    // the pull request numbers it concerns
	Branches   []string `json:"branches,omitempty"` // head branches it concerns
	HeadSHA    string   `json:"head_sha,omitempty"`
}

// Relevant says whether the event concerns any pull request or branch.
func (e Event) Relevant() bool { return len(e.Pulls) > 0 || len(e.Branches) > 0 }

// Events are the event types ParseEvent reads.
var Events = []string{"pull_request", "pull_request_review", "pull_request_review_comment", "check_run", "check_suite"}

type hookPull struct {
	Number int `json:"number"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
}

type hookSuite struct {
	HeadBranch   *string    `json:"head_branch"`
	HeadSHA      string     `json:"head_sha"`
	PullRequests []hookPull `json:"pull_requests"`
}

type hookPayload struct {
	Action     string `json:"action"`
	Number     int    `json:"number"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	PullRequest *hookPull `json:"pull_request"`
	CheckRun    *struct {
		HeadSHA      string     `json:"head_sha"`
		PullRequests []hookPull `json:"pull_requests"`
		CheckSuite   *hookSuite `json:"check_suite"`
	} `json:"check_run"`
	CheckSuite *hookSuite `json:"check_suite"`
}

// ParseEvent reads a delivery of eventType (the X-GitHub-Event value). An
// event type drover does not follow (ping, push, …) is an Event that is
// not Relevant, without error; a body that is not JSON, or a followed
// event without the object its type carries, is an error.
func ParseEvent(eventType string, body []byte) (Event, error) {
	ev := Event{Type: eventType}
	if !slices.Contains(Events, eventType) {
		return ev, nil
	}
	var p hookPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return ev, fmt.Errorf("%s event: the body is not JSON: %v", eventType, err)
	}
	ev.Action, ev.Repository = p.Action, p.Repository.FullName
	addPull := func(h hookPull) {
		if h.Number > 0 && !slices.Contains(ev.Pulls, h.Number) {
			ev.Pulls = append(ev.Pulls, h.Number)
		}
		addBranch(&ev, h.Head.Ref)
	}
	switch eventType {
	case "pull_request", "pull_request_review", "pull_request_review_comment":
		if p.PullRequest == nil {
			return ev, fmt.Errorf("%s event: no pull_request in the body", eventType)
		}
		if p.Number > 0 { // pull_request carries the number at the top as well
			addPull(hookPull{Number: p.Number})
		}
		addPull(*p.PullRequest)
		ev.HeadSHA = p.PullRequest.Head.SHA
	case "check_run":
		if p.CheckRun == nil {
			return ev, errors.New("check_run event: no check_run in the body")
		}
		ev.HeadSHA = p.CheckRun.HeadSHA
		for _, h := range p.CheckRun.PullRequests {
			addPull(h)
		}
		if s := p.CheckRun.CheckSuite; s != nil {
			addSuite(&ev, *s, addPull)
		}
	case "check_suite":
		if p.CheckSuite == nil {
			return ev, errors.New("check_suite event: no check_suite in the body")
		}
		ev.HeadSHA = p.CheckSuite.HeadSHA
		addSuite(&ev, *p.CheckSuite, addPull)
	}
	return ev, nil
}

// addSuite adds a check suite's pull requests and head branch (a suite
// of a fork's push lists no pull requests: the branch is what is known).
func addSuite(ev *Event, s hookSuite, addPull func(hookPull)) {
	for _, h := range s.PullRequests {
		addPull(h)
	}
	if s.HeadBranch != nil {
		addBranch(ev, *s.HeadBranch)
	}
	if ev.HeadSHA == "" {
		ev.HeadSHA = s.HeadSHA
	}
}

func addBranch(ev *Event, b string) {
	if b != "" && !slices.Contains(ev.Branches, b) {
		ev.Branches = append(ev.Branches, b)
	}
}
