package github_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/forge/github"
)

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerifySignature(t *testing.T) {
	body := `{"action":"opened","number":1}`
	// GitHub's documented test vector (docs.github.com, "Validating webhook
	// deliveries"): secret "It's a Secret to Everybody", payload "Hello, World!".
	const docSig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	for _, tc := range []struct {
		name, secret, body, header, err string
	}{
		{"GitHub's example", "It's a Secret to Everybody", "Hello, World!", docSig, ""},
		{"signed body", "s3cret", body, sign("s3cret", body), ""},
		{"another secret", "other", body, sign("s3cret", body), "does not match"},
		{"body changed", "s3cret", body + " ", sign("s3cret", body), "does not match"},
		{"no header", "s3cret", body, "", "is missing"},
		{"sha1 header", "s3cret", body, "sha1=0123", "does not start with sha256="},
		{"not hex", "s3cret", body, "sha256=zz", "not a hex SHA-256"},
		{"short", "s3cret", body, "sha256=abcd", "not a hex SHA-256"},
		{"no secret", "", body, sign("", body), "secret is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := github.VerifySignature([]byte(tc.secret), []byte(tc.body), tc.header)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// Payloads cut down from the webhook schemas (webhook-pull-request-opened,
// webhook-pull-request-review-submitted, webhook-pull-request-review-comment-created,
// webhook-check-run-completed, webhook-check-suite-completed).
func TestParseEvent(t *testing.T) {
	repo := `"repository": {"id": 1, "name": "app", "full_name": "acme/app"}, "sender": {"login": "alice"}`
	pr := `"pull_request": {"number": 12, "state": "open", "html_url": "https://github.com/acme/app/pull/12",
		"head": {"ref": "drover/eng-1", "sha": "aaa", "label": "acme:drover/eng-1"}, "base": {"ref": "main", "sha": "bbb"}}`
	for _, tc := range []struct {
		event, body string
		action      string
		pulls       []int
		branches    []string
		sha         string
		err         string
	}{
		{event: "pull_request", body: `{"action": "closed", "number": 12, ` + pr + `, ` + repo + `}`,
			action: "closed", pulls: []int{12}, branches: []string{"drover/eng-1"}, sha: "aaa"},
		{event: "pull_request_review", body: `{"action": "submitted", "review": {"id": 80, "state": "changes_requested", "body": "fix", "user": {"login": "alice"}}, ` + pr + `, ` + repo + `}`,
			action: "submitted", pulls: []int{12}, branches: []string{"drover/eng-1"}, sha: "aaa"},
		{event: "pull_request_review_comment", body: `{"action": "created", "comment": {"id": 9, "path": "a.go", "line": 3, "body": "nit"}, ` + pr + `, ` + repo + `}`,
			action: "created", pulls: []int{12}, branches: []string{"drover/eng-1"}, sha: "aaa"},
		{event: "check_run", body: `{"action": "completed", "check_run": {"id": 4, "name": "test", "head_sha": "ccc", "status": "completed", "conclusion": "failure",
			"pull_requests": [{"number": 12, "head": {"ref": "drover/eng-1", "sha": "ccc"}, "base": {"ref": "main"}}, {"number": 14, "head": {"ref": "drover/eng-2", "sha": "ccc"}}],
			"check_suite": {"id": 5, "head_branch": "drover/eng-1", "head_sha": "ccc", "pull_requests": [{"number": 12, "head": {"ref": "drover/eng-1"}}]}}, ` + repo + `}`,
			action: "completed", pulls: []int{12, 14}, branches: []string{"drover/eng-1", "drover/eng-2"}, sha: "ccc"},
		{event: "check_run", body: `{"action": "created", "check_run": {"id": 4, "name": "test", "head_sha": "ddd", "pull_requests": [],
			"check_suite": {"id": 5, "head_branch": "fork-branch", "head_sha": "ddd", "pull_requests": []}}, ` + repo + `}`,
			action: "created", branches: []string{"fork-branch"}, sha: "ddd"},
		{event: "check_suite", body: `{"action": "completed", "check_suite": {"id": 5, "head_branch": "drover/eng-3", "head_sha": "eee", "status": "completed", "conclusion": "success",
			"pull_requests": [{"number": 15, "head": {"ref": "drover/eng-3", "sha": "eee"}}]}, ` + repo + `}`,
			action: "completed", pulls: []int{15}, branches: []string{"drover/eng-3"}, sha: "eee"},
		{event: "check_suite", body: `{"action": "requested", "check_suite": {"id": 5, "head_branch": null, "head_sha": "fff", "pull_requests": []}, ` + repo + `}`,
			action: "requested", sha: "fff"},
		{event: "ping", body: `{"zen": "Keep it logically awesome.", "hook_id": 1}`},
		{event: "push", body: `not even json`},
		{event: "pull_request", body: `{"action": "opened"`, err: "not JSON"},
		{event: "pull_request", body: `{"action": "opened", ` + repo + `}`, err: "no pull_request"},
		{event: "check_run", body: `{"action": "completed", ` + repo + `}`, err: "no check_run"},
		{event: "check_suite", body: `{"action": "completed", ` + repo + `}`, err: "no check_suite"},
	} {
		t.Run(tc.event+"/"+tc.action+tc.err, func(t *testing.T) {
			ev, err := github.ParseEvent(tc.event, []byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.event) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != tc.event || ev.Action != tc.action || !slices.Equal(ev.Pulls, tc.pulls) || !slices.Equal(ev.Branches, tc.branches) || ev.HeadSHA != tc.sha {
				t.Fatalf("got %+v", ev)
			}
			if ev.Relevant() != (len(tc.pulls)+len(tc.branches) > 0) {
				t.Fatalf("Relevant() = %v", ev.Relevant())
			}
			if tc.action != "" && ev.Repository != "acme/app" {
				t.Fatalf("repository %q", ev.Repository)
			}
		})
	}
}
