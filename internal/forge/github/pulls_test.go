package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/forge/github"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
)

const token = "test-token"

func newFake(t *testing.T) *fake.Server {
	gh := fake.New("acme", "app")
	gh.Token = token
	t.Cleanup(gh.Close)
	return gh
}

func newForge(t *testing.T, gh *fake.Server, cfg forge.Config) *github.Forge {
	t.Helper()
	cfg.Kind, cfg.Repository, cfg.Endpoint = "github", "acme/app", gh.URL
	f, err := github.New(github.Options{Config: cfg, Getenv: func(k string) string {
		if k == "GITHUB_TOKEN" {
			return token
		}
		return ""
	}, RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func spec(head string) forge.PullSpec {
	return forge.PullSpec{Head: head, Base: "main", Title: "ENG-1: fix the thing", Body: "drover card ENG-1"}
}

// The first EnsurePull opens the pull request; the second finds it and
// opens nothing.
func TestEnsurePullCreatesThenFinds(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	p, err := f.EnsurePull(ctx, spec("drover/eng-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Created || p.Number == 0 || p.URL != fmt.Sprintf("https://github.com/acme/app/pull/%d", p.Number) {
		t.Fatalf("first EnsurePull: %+v", p)
	}
	again, err := f.EnsurePull(ctx, spec("drover/eng-1"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.Number != p.Number || again.URL != p.URL {
		t.Fatalf("second EnsurePull: %+v, want #%d not created", again, p.Number)
	}
	if n := gh.Count("POST /pulls"); n != 1 {
		t.Fatalf("POST /pulls %d times, want 1", n)
	}
	got := gh.Pull(p.Number)
	if got.Head != "drover/eng-1" || got.Base != "main" || got.Title != "ENG-1: fix the thing" || got.Body != "drover card ENG-1" || got.User != fake.Author {
		t.Fatalf("the pull request GitHub holds: %+v", got)
	}
}

// A closed pull request of the branch is not the open one: a new one opens.
func TestEnsurePullAfterClose(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	p, _ := f.EnsurePull(ctx, spec("b"))
	gh.ClosePull(p.Number, "alice")
	q, err := f.EnsurePull(ctx, spec("b"))
	if err != nil || !q.Created || q.Number == p.Number {
		t.Fatalf("after close: %+v, %v; want a new pull request", q, err)
	}
}

// Two nodes race: both list (none), both create; GitHub opens one and
// answers the other 422, which reads the listing again. One pull request,
// both callers hold its number, exactly one of them created it.
func TestEnsurePullRace(t *testing.T) {
	for round := 0; round < 20; round++ {
		gh := newFake(t)
		f1, f2 := newForge(t, gh, forge.Config{}), newForge(t, gh, forge.Config{})
		var wg sync.WaitGroup
		res := make([]forge.Pull, 2)
		errs := make([]error, 2)
		for i, f := range []*github.Forge{f1, f2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = f.EnsurePull(context.Background(), spec("drover/race"))
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: %v, %v", round, errs[0], errs[1])
		}
		if len(gh.Pulls()) != 1 || res[0].Number != res[1].Number || res[0].Created == res[1].Created {
			t.Fatalf("round %d: %d pull requests, results %+v", round, len(gh.Pulls()), res)
		}
		posts := gh.Count("POST /pulls")
		var refused int
		for _, r := range gh.Log() {
			if r.Method == http.MethodPost && r.Status == http.StatusUnprocessableEntity {
				refused++
			}
		}
		if posts != 1 && !(posts == 2 && refused == 1) {
			t.Fatalf("round %d: %d POSTs, %d refused; want 1, or 2 with the 422 path taken", round, posts, refused)
		}
	}
}

// A hostile branch name is one query value: it filters by exactly that
// branch, and finds the pull request it opened.
func TestEnsurePullHostileBranch(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	other := gh.OpenPull("drover/x", "main", "another branch", "bob")
	for _, b := range []string{"drover/x&state=closed", "drover/x#frag", "drover/a+b%20c", "drover/ünïcode=1", "drover/x&head=acme:drover/x"} {
		p, err := f.EnsurePull(ctx, spec(b))
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if !p.Created || p.Number == other || gh.Pull(p.Number).Head != b {
			t.Fatalf("%q: %+v is %+v", b, p, gh.Pull(p.Number))
		}
		again, err := f.EnsurePull(ctx, spec(b))
		if err != nil || again.Created || again.Number != p.Number {
			t.Fatalf("%q again: %+v %v", b, again, err)
		}
	}
	for _, r := range gh.Log() {
		if r.Method != http.MethodGet {
			continue
		}
		u, _ := url.Parse(r.Path)
		if h := u.Query().Get("head"); !strings.HasPrefix(h, "acme:drover/") || len(u.Query()["head"]) != 1 {
			t.Errorf("%s: head %q", r.Path, h)
		}
	}
}

// A refusal other than "already exists" is ErrRefused naming the
// operation and GitHub's message.
func TestEnsurePullRefused(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	_, err := f.EnsurePull(context.Background(), forge.PullSpec{Head: "main", Base: "main", Title: "t"})
	if !errors.Is(err, forge.ErrRefused) || !strings.Contains(err.Error(), "pulls/create") || !strings.Contains(err.Error(), "No commits between main and main") {
		t.Fatalf("err = %v", err)
	}
	if _, err := f.EnsurePull(context.Background(), forge.PullSpec{Head: "x", Base: "main"}); err == nil || !strings.Contains(err.Error(), "Title") {
		t.Fatalf("no title: %v", err)
	}
}

// An idle pull request is read with four conditional requests, all 304,
// and reports NotModified; a review, a comment, a check run or a push is
// seen on the next read.
func TestPullStateConditional(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	gh.Push("drover/eng-1", "1111111111111111111111111111111111111111")
	p, _ := f.EnsurePull(ctx, spec("drover/eng-1"))
	st, err := f.PullState(ctx, p.Number, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.NotModified || st.State != forge.StateOpen || st.HeadSHA != "1111111111111111111111111111111111111111" || st.ETag == "" || st.URL != p.URL {
		t.Fatalf("first read: %+v", st)
	}
	gh.ResetLog()
	idle, err := f.PullState(ctx, p.Number, st.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if !idle.NotModified || idle.ETag != st.ETag {
		t.Fatalf("idle read: %+v", idle)
	}
	if log := gh.Log(); len(log) != 4 {
		t.Fatalf("idle read sent %d requests: %v", len(log), log)
	}
	for _, r := range gh.Log() {
		if r.Status != http.StatusNotModified {
			t.Errorf("idle read: %v, want 304", r)
		}
	}
	changes := []struct {
		name string
		do   func()
		saw  func(forge.PullState) bool
	}{
		{"a check run (the pull request's own ETag does not change)", func() {
			gh.AddCheckRun("1111111111111111111111111111111111111111", "test", "completed", "failure", "3 failed", "TestX", "https://ci/1")
		}, func(s forge.PullState) bool { return len(s.Checks) == 1 }},
		{"a review", func() { gh.SubmitReview(p.Number, "alice", forge.ReviewChangesRequested, "please fix") },
			func(s forge.PullState) bool { return len(s.Reviews) == 1 }},
		{"a review comment", func() { gh.AddReviewComment(p.Number, 0, "alice", "main.go", 3, "nit") },
			func(s forge.PullState) bool { return len(s.Comments) == 1 }},
		{"a push", func() { gh.Push("drover/eng-1", "2222222222222222222222222222222222222222") },
			func(s forge.PullState) bool {
				return s.HeadSHA == "2222222222222222222222222222222222222222" && len(s.Checks) == 0
			}},
	}
	tag := st.ETag
	for _, c := range changes {
		c.do()
		s, err := f.PullState(ctx, p.Number, tag)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.NotModified || !c.saw(s) {
			t.Fatalf("%s: not seen: %+v", c.name, s)
		}
		tag = s.ETag
		if s, _ := f.PullState(ctx, p.Number, tag); !s.NotModified {
			t.Fatalf("after %s: the next read is not NotModified", c.name)
		}
	}
	// An ETag drover cannot read (an older format) reads everything.
	if s, err := f.PullState(ctx, p.Number, `W/"abc"`); err != nil || s.NotModified || s.HeadSHA == "" {
		t.Fatalf("foreign etag: %+v %v", s, err)
	}
}

// Reviews, review comments and check runs read back with their fields.
func TestPullStateReadsBack(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	sha := "abcabcabcabcabcabcabcabcabcabcabcabcabca"
	gh.Push("feature", sha)
	p, _ := f.EnsurePull(ctx, spec("feature"))
	rid := gh.SubmitReview(p.Number, "alice", forge.ReviewChangesRequested, "the loop is off by one")
	cid := gh.AddReviewComment(p.Number, rid, "alice", "internal/x/x.go", 42, "here: <= should be <")
	gh.SubmitReview(p.Number, "bob", forge.ReviewApproved, "")
	gh.AddCheckRun(sha, "test", "completed", "failure", "2 tests failed", "TestA\nTestB", "https://ci.example/run/7")
	gh.AddCheckRun(sha, "lint", "in_progress", "", "", "", "")
	gh.AddCheckRun("ffffffffffffffffffffffffffffffffffffffff", "other", "completed", "failure", "", "", "")
	st, err := f.PullState(ctx, p.Number, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Reviews) != 2 || st.Reviews[0].ID != rid || st.Reviews[0].User != "alice" || st.Reviews[0].State != forge.ReviewChangesRequested ||
		st.Reviews[0].Body != "the loop is off by one" || st.Reviews[0].CommitID != sha || st.Reviews[0].SubmittedAt.IsZero() || st.Reviews[1].State != forge.ReviewApproved {
		t.Fatalf("reviews: %+v", st.Reviews)
	}
	if len(st.Comments) != 1 || st.Comments[0] != (forge.ReviewComment{ID: cid, ReviewID: rid, User: "alice", Path: "internal/x/x.go", Line: 42,
		Body: "here: <= should be <", CreatedAt: st.Comments[0].CreatedAt}) || st.Comments[0].CreatedAt.IsZero() {
		t.Fatalf("comments: %+v", st.Comments)
	}
	if len(st.Checks) != 2 {
		t.Fatalf("checks: %+v", st.Checks)
	}
	test, lint := st.Checks[0], st.Checks[1]
	if test.Name != "test" || !test.Failed() || test.Summary != "2 tests failed\n\nTestA\nTestB" || test.URL != "https://ci.example/run/7" {
		t.Fatalf("test check: %+v", test)
	}
	if lint.Name != "lint" || lint.Status != "in_progress" || lint.Failed() || !strings.HasPrefix(lint.URL, "https://github.com/acme/app/runs/") {
		t.Fatalf("lint check: %+v", lint)
	}
	// A re-run: the listing shows the newest run of each name.
	gh.AddCheckRun(sha, "test", "completed", "success", "", "", "")
	st, _ = f.PullState(ctx, p.Number, st.ETag)
	if v := forge.Checks([]string{"test"}, st.Checks); v.State != forge.ChecksPassing {
		t.Fatalf("after the re-run: %+v from %+v", v, st.Checks)
	}
	if v := forge.Checks(nil, st.Checks); v.State != forge.ChecksPending {
		t.Fatalf("every check deciding: %+v", v)
	}
}

// Merged and closed pull requests say so, and by whom.
func TestPullStateMergedClosed(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	a, _ := f.EnsurePull(ctx, spec("a"))
	b, _ := f.EnsurePull(ctx, spec("b"))
	gh.MergePull(a.Number, "carol")
	gh.ClosePull(b.Number, "dave")
	sa, err := f.PullState(ctx, a.Number, "")
	if err != nil || !sa.Merged || sa.State != forge.StateClosed || sa.MergedBy != "carol" {
		t.Fatalf("merged: %+v %v", sa, err)
	}
	sb, err := f.PullState(ctx, b.Number, "")
	if err != nil || sb.Merged || sb.State != forge.StateClosed || sb.ClosedBy != "dave" || sb.MergedBy != "" {
		t.Fatalf("closed: %+v %v", sb, err)
	}
}

// Listings of several pages are followed to the end.
func TestPullStatePagination(t *testing.T) {
	gh := newFake(t)
	f := newForge(t, gh, forge.Config{})
	ctx := context.Background()
	p, _ := f.EnsurePull(ctx, spec("many"))
	for i := 0; i < 230; i++ {
		gh.AddReviewComment(p.Number, 0, "alice", "f.go", i+1, "c"+strconv.Itoa(i))
	}
	for i := 0; i < 120; i++ {
		gh.SubmitReview(p.Number, "alice", forge.ReviewCommented, "r"+strconv.Itoa(i))
	}
	sha := gh.Pull(p.Number).HeadSHA
	for i := 0; i < 105; i++ {
		gh.AddCheckRun(sha, "check-"+strconv.Itoa(i), "completed", "success", "", "", "")
	}
	st, err := f.PullState(ctx, p.Number, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Comments) != 230 || st.Comments[229].Body != "c229" || len(st.Reviews) != 120 || len(st.Checks) != 105 {
		t.Fatalf("%d comments, %d reviews, %d checks", len(st.Comments), len(st.Reviews), len(st.Checks))
	}
	if n := gh.Count("GET /pulls/{number}/comments"); n != 3 {
		t.Fatalf("%d comment pages read, want 3", n)
	}
	// A listing of several pages is read whole each time (its first
	// page's ETag would hide a change on the last): a check run, which
	// changes neither the pull request nor the first page of check runs:
	// a re-run of a check listed on the second page, which fails.
	gh.AddCheckRun(sha, "check-104", "completed", "failure", "", "", "")
	st, err = f.PullState(ctx, p.Number, st.ETag)
	if err != nil || st.NotModified || len(st.Checks) != 105 || forge.Checks(nil, st.Checks).State != forge.ChecksFailing {
		t.Fatalf("after a re-run on page 2: %d checks, not modified %v, %v", len(st.Checks), st.NotModified, err)
	}
}

// GitHub's failures map to the forge's kinds, each naming the repository
// and the operation.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	reset := time.Now().Add(17 * time.Minute).Truncate(time.Second)
	for _, tc := range []struct {
		name  string
		setup func(gh *fake.Server)
		pull  int
		kind  error
		op    string
	}{
		{"401 bad token", func(gh *fake.Server) { gh.Token = "another" }, 1, forge.ErrAuth, "pulls/get"},
		{"403 without a rate limit", func(gh *fake.Server) {
			gh.Inject(fake.Fault{Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by personal access token"}`, Times: 1})
		}, 1, forge.ErrAuth, "pulls/get"},
		{"404 no such pull request", func(*fake.Server) {}, 999, forge.ErrNotFound, "pulls/get"},
		{"5xx", func(gh *fake.Server) { gh.Down(1) }, 1, forge.ErrUnavailable, "pulls/get"},
		{"5xx on the check runs", func(gh *fake.Server) {
			gh.Inject(fake.Fault{Match: func(r fake.Route) bool { return strings.Contains(r.Path, "/check-runs") }, Status: 502, Body: "bad gateway", Times: 1})
		}, 1, forge.ErrUnavailable, "checks/list-for-ref"},
		{"malformed body", func(gh *fake.Server) {
			gh.Inject(fake.Fault{Status: 200, Body: `{"number": "one"}`, Times: 1})
		}, 1, forge.ErrUnavailable, "pulls/get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := newFake(t)
			f := newForge(t, gh, forge.Config{})
			if _, err := f.EnsurePull(ctx, spec("x")); err != nil {
				t.Fatal(err)
			}
			tc.setup(gh)
			_, err := f.PullState(ctx, tc.pull, "")
			var fe *forge.Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &fe) || fe.Op != tc.op || fe.Repository != "acme/app" {
				t.Fatalf("err = %v, want %v from %s", err, tc.kind, tc.op)
			}
			if !strings.Contains(err.Error(), "acme/app "+tc.op) {
				t.Fatalf("message %q does not name the repository and operation", err)
			}
		})
	}
	t.Run("429 and primary limit: rate limited until the reset", func(t *testing.T) {
		gh := newFake(t)
		f := newForge(t, gh, forge.Config{})
		for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
			gh.Inject(fake.Fault{Status: status, Times: 1, Body: `{"message":"API rate limit exceeded"}`,
				Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}})
			_, err := f.EnsurePull(ctx, spec("x"))
			var rl *forge.RateLimitError
			if !errors.As(err, &rl) || !rl.Until.Equal(reset) || rl.Secondary || !strings.Contains(err.Error(), "pulls/list") {
				t.Fatalf("%d: err = %v", status, err)
			}
		}
		gh.SecondaryRateLimit(1, 90)
		_, err := f.EnsurePull(ctx, spec("x"))
		var rl *forge.RateLimitError
		if !errors.As(err, &rl) || !rl.Secondary || time.Until(rl.Until) < 80*time.Second {
			t.Fatalf("secondary: %v", err)
		}
	})
}

// A bad setting is an error naming its key.
func TestNewValidates(t *testing.T) {
	env := func(string) string { return "tok" }
	for _, tc := range []struct {
		cfg  forge.Config
		env  func(string) string
		want string
	}{
		{forge.Config{Kind: "gitlab", Repository: "a/b"}, env, "workspace.git.pull_request.provider"},
		{forge.Config{Repository: "ab"}, env, "workspace.git.pull_request.repo"},
		{forge.Config{Repository: "a/b/c"}, env, "workspace.git.pull_request.repo"},
		{forge.Config{Repository: "a/b", Endpoint: "api.github.com"}, env, "workspace.git.pull_request.endpoint"},
		{forge.Config{Repository: "a/b"}, func(string) string { return "" }, "$GITHUB_TOKEN is empty"},
		{forge.Config{Repository: "a/b", TokenEnv: "GH_PR"}, func(string) string { return "" }, "$GH_PR is empty"},
	} {
		_, err := github.New(github.Options{Config: tc.cfg, Getenv: tc.env})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// api_key is the token itself (WORKFLOW.md writes it as $VAR; the
	// config expands it): no variable is read then.
	read := false
	if _, err := github.New(github.Options{Config: forge.Config{Repository: "a/b", APIKey: "tok"}, Getenv: func(string) string { read = true; return "" }}); err != nil || read {
		t.Fatalf("api_key: %v, read the environment %v", err, read)
	}
	used := ""
	if _, err := github.New(github.Options{Config: forge.Config{Repository: "a/b", TokenEnv: "GH_PR"}, Getenv: func(k string) string { used = k; return "x" }}); err != nil || used != "GH_PR" {
		t.Fatalf("token_env: read %q, %v", used, err)
	}
}
