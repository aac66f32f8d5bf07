package linear_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	fake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/linear"
	"github.com/drover-dev/drover/internal/tracker/trackertest"
)

// TestConformance: Linear passes the tracker suite against its fake.
func TestConformance(t *testing.T) { trackertest.Run(t, kit) }

// kit is Linear for trackertest: the fake's project with an API key, Todo
// and In Progress active, a blocked card shown back in Todo; and the
// operations each step of the suite sends (state-2 is Todo, state-3 In
// Progress, state-4 In Review).
var kit = trackertest.Kit{
	Kind: tracker.KindLinear,
	Start: func(t *testing.T) (trackertest.Fake, string) {
		ln := fake.New("eng-project-1a2b")
		ln.APIKey = "lin_api_test"
		t.Cleanup(ln.Close)
		t.Setenv("LINEAR_API_KEY", "lin_api_test")
		return lnFake{ln}, "kind: linear\nprovider: {project_slug: eng-project-1a2b}\nactive_states: [Todo, In Progress]\n" +
			"roles: {blocked: {state: Todo}}\nendpoint: " + ln.URL
	},
	New: func(t *testing.T, cfg tracker.Config) tracker.Tracker { return linear.New(linear.Options{Config: cfg}) },
	Want: map[string][]string{
		"first sync":       {"DroverCandidates 200"},
		"120 issues":       {"DroverCandidates 200", "DroverCandidates 200", "DroverCandidates 200"},
		"success":          {"DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-4) 200"},
		"give-up":          {"DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-2) 200", "DroverComment(issue-0001) 200"},
		"invalid input":    {"DroverMove(issue-0001→state-2) 200", "DroverComment(issue-0001) 200"},
		"parked":           {"DroverMove(issue-0001→state-3) 200", "DroverComment(issue-0001) 200"},
		"answer sync":      {"DroverCandidates 200", "DroverComments 200"},
		"answered":         {"DroverMove(issue-0001→state-3) 200", "DroverMove(issue-0001→state-4) 200"},
		"sync after close": {"DroverCandidates 200", "DroverIssuesByID 200"},
		"closed mid-run":   {},
		"after a restart":  {"DroverMove(issue-0001→state-2) 200", "DroverComment(issue-0001) 200"},
	},
}

// lnFake is the fake as the suite drives it.
type lnFake struct{ *fake.Server }

func (f lnFake) AddIssue(title, body string, labels ...string) string {
	return f.Server.AddIssue(title, body, "Todo", labels...)
}
func (f lnFake) AddIgnored(title string) string { return f.Server.AddIssue(title, "", "Backlog") }
func (f lnFake) Block(id, blocker string)       { f.Server.Block(id, blocker) }
func (f lnFake) Close(id string)                { f.SetState(id, "Canceled") }
func (f lnFake) Shows(id string) string         { return f.Issue(id).State }
func (f lnFake) Down()                          { f.Inject(fake.Fault{Status: http.StatusBadGateway, Body: "bad gateway"}) }
func (f lnFake) Malformed() {
	f.Inject(fake.Fault{Status: http.StatusOK, Body: `{"data": {"issues": `, Times: 1})
}
func (f lnFake) RateLimit(until time.Time) { f.Server.RateLimit(1, until) }

func (f lnFake) Comments(id string) []string {
	var out []string
	for _, c := range f.Server.Comments(id) {
		out = append(out, c.Body)
	}
	return out
}

// Calls are "Operation(key variables) status".
func (f lnFake) Calls() []string {
	var out []string
	for _, r := range f.Log() {
		s := r.Op
		switch r.Op {
		case "DroverMove":
			s += fmt.Sprintf("(%v→%v)", r.Vars["id"], r.Vars["stateId"])
		case "DroverComment":
			s += fmt.Sprintf("(%v)", r.Vars["issueId"])
		}
		out = append(out, s+" "+strconv.Itoa(r.Status))
	}
	f.ResetLog()
	return out
}
