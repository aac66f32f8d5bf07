package github_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/github"
	"github.com/drover-dev/drover/internal/tracker/trackertest"
)

// TestConformance: GitHub passes the tracker suite against its fake.
func TestConformance(t *testing.T) { trackertest.Run(t, kit) }

const (
	base     = "/repos/acme/app"
	fullList = "GET " + base + "/issues?direction=asc&per_page=100&sort=created&state=open → 200"
	delta    = "GET " + base + "/issues?direction=asc&per_page=100&since=…"
)

// kit is GitHub for trackertest: the fake of acme/app with a token, and
// the requests each step of the suite sends (only the label writes that
// change something; conditional listings after the first).
var kit = trackertest.Kit{
	Kind: tracker.KindGitHub,
	Start: func(t *testing.T) (trackertest.Fake, string) {
		gh := fake.New("acme", "app")
		gh.Token = "test-token"
		t.Cleanup(gh.Close)
		return ghFake{gh}, section(gh)
	},
	New: func(t *testing.T, cfg tracker.Config) tracker.Tracker { return newTracker(t, cfg) },
	Want: map[string][]string{
		"first sync": {fullList},
		"120 issues": {fullList, "GET " + base + "/issues?direction=asc&page=2&per_page=100&sort=created&state=open → 200"},
		"success": {
			`POST ` + base + `/issues/1/labels {"labels":["drover:running"]} → 200`,
			`DELETE ` + base + `/issues/1/labels/drover:running → 200`,
			`POST ` + base + `/issues/1/labels {"labels":["drover:review"]} → 200`},
		"give-up": {
			`POST ` + base + `/issues/1/labels {"labels":["drover:running"]} → 200`,
			`DELETE ` + base + `/issues/1/labels/drover:running → 200`, // retry: back to ready
			`POST ` + base + `/issues/1/labels {"labels":["drover:running"]} → 200`,
			`DELETE ` + base + `/issues/1/labels/drover:running → 200`,
			`POST ` + base + `/issues/1/labels {"labels":["drover:blocked"]} → 200`,
			`POST ` + base + `/issues/1/comments → 201`},
		"invalid input": {
			`POST ` + base + `/issues/1/labels {"labels":["drover:blocked"]} → 200`,
			`POST ` + base + `/issues/1/comments → 201`},
		"parked": {
			`POST ` + base + `/issues/1/labels {"labels":["drover:running"]} → 200`,
			`DELETE ` + base + `/issues/1/labels/drover:running → 200`,
			`POST ` + base + `/issues/1/labels {"labels":["drover:awaiting-input"]} → 200`,
			`POST ` + base + `/issues/1/comments → 201`},
		"answer sync": {delta, "GET " + base + "/issues/1/comments?per_page=100&since=…"},
		"answered": {
			`DELETE ` + base + `/issues/1/labels/drover:awaiting-input → 200`,
			`POST ` + base + `/issues/1/labels {"labels":["drover:running"]} → 200`,
			`DELETE ` + base + `/issues/1/labels/drover:running → 200`,
			`POST ` + base + `/issues/1/labels {"labels":["drover:review"]} → 200`},
		"sync after close": {delta, "GET " + base + "/issues/1 → 200"},
		"closed mid-run":   {`DELETE ` + base + `/issues/1/labels/drover:running → 200`},
		"after a restart": {
			`POST ` + base + `/issues/1/labels {"labels":["drover:blocked"]} → 200`,
			`POST ` + base + `/issues/1/comments → 201`},
	},
}

func section(gh *fake.Server) string {
	return fmt.Sprintf("kind: github\nendpoint: %s\napi_key: test-token\nrepo: acme/app", gh.URL)
}

// ghFake is the fake as the suite drives it; ids are issue numbers.
type ghFake struct{ *fake.Server }

func num(id string) int { n, _ := strconv.Atoi(id); return n }

func (f ghFake) AddIssue(title, body string, labels ...string) string {
	return strconv.Itoa(f.Server.AddIssue(title, body, labels...))
}
func (f ghFake) AddIgnored(title string) string       { return strconv.Itoa(f.AddPullRequest(title)) }
func (f ghFake) Edit(id, title, body string)          { f.EditIssue(num(id), title, body) }
func (f ghFake) Block(id, blocker string)             { f.DependsOn(num(id), num(blocker)) }
func (f ghFake) Close(id string)                      { f.CloseIssue(num(id)) }
func (f ghFake) PersonComments(id, user, body string) { f.Server.PersonComments(num(id), user, body) }
func (f ghFake) Down()                                { f.Server.Down(-1) }

func (f ghFake) Shows(id string) string {
	is := f.Issue(num(id))
	var own []string
	for _, l := range is.Labels {
		if strings.HasPrefix(l, "drover:") {
			own = append(own, l)
		}
	}
	if len(own) > 0 {
		return strings.Join(own, ",")
	}
	return is.State
}

func (f ghFake) Comments(id string) []string {
	var out []string
	for _, c := range f.Server.Comments(num(id)) {
		out = append(out, c.Body)
	}
	return out
}

func (f ghFake) Malformed() {
	f.Inject(fake.Fault{Status: http.StatusOK, Body: `[{"number": "not a number"`, Times: 1})
}

// RateLimit is GitHub's primary limit: x-ratelimit-remaining 0 until the
// reset time.
func (f ghFake) RateLimit(until time.Time) {
	f.Inject(fake.Fault{Status: http.StatusForbidden, Times: 1, Body: `{"message":"API rate limit exceeded for user ID 1."}`,
		Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(until.Unix(), 10)}}})
}

// Calls are "METHOD path body → status" (bodies of writes only, but a
// comment's).
func (f ghFake) Calls() []string {
	var out []string
	for _, r := range f.Log() {
		line := r.Method + " " + r.Path
		if r.Method != "GET" && r.Body != "" && !strings.Contains(r.Path, "/comments") {
			line += " " + r.Body
		}
		out = append(out, fmt.Sprintf("%s → %d", line, r.Status))
	}
	f.ResetLog()
	return out
}

// world is a suite world with the fake as its own type, for GitHub's own
// tests.
type world struct {
	*trackertest.World
	gh *fake.Server
}

func newWorld(t *testing.T, extra ...string) *world {
	t.Helper()
	w := trackertest.NewWorld(t, kit, extra...)
	return &world{World: w, gh: w.Fake.(ghFake).Server}
}

// newWorldOn is newWorld against gh, with gh's tracker section unless
// extra names one.
func newWorldOn(t *testing.T, gh *fake.Server, extra ...string) *world {
	t.Helper()
	k := kit
	k.Start = func(*testing.T) (trackertest.Fake, string) { return ghFake{gh}, section(gh) }
	w := trackertest.NewWorld(t, k, extra...)
	return &world{World: w, gh: gh}
}

// issue adds an issue whose card plays the sim kinds given.
func (w *world) issue(title, spec string, labels ...string) int {
	return num(w.Issue(title, spec, labels...))
}

func (w *world) card(n int) board.Card { return w.Card(strconv.Itoa(n)) }

func newTracker(t *testing.T, cfg tracker.Config) *github.Tracker {
	t.Helper()
	tr, err := github.New(github.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
