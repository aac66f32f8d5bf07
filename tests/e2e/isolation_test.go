package e2e_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	lfake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
)

// issues is what the isolation scenario does in a tracker, the same for
// GitHub and Linear.
type issues struct {
	tracker string // the tracker section of WORKFLOW.md
	add     func(title, spec string) string
	comment func(id, user, body string)
	close   func(id string)
	edit    func(id, title, spec string)
}

// A person's answer holding terminal escapes on one issue stops nothing:
// in the same poll, another issue's close cancels its running card, an
// edit reaches its (blocked) card, another parked card's answer is taken — and the
// hostile answer is taken without its escapes, said on its card; an answer
// drover cannot take at all (over the size limit) is refused, visibly, on
// its card and in drover status. On the built binary, against GitHub's and
// Linear's fakes.
func TestServeHostileAnswerStopsNothing(t *testing.T) {
	spec := func(s string) string { return "Do it.\n\n```drover\n" + s + "\n```\n" }
	t.Run("github", func(t *testing.T) {
		gh := fake.New("acme", "app")
		gh.Token = "ghp_test"
		t.Cleanup(gh.Close)
		t.Setenv("GH_TEST_TOKEN", "ghp_test")
		hostileAnswerScenario(t, issues{
			tracker: "kind: github\nendpoint: " + gh.URL + "\napi_key: $GH_TEST_TOKEN\nrepo: acme/app\n",
			add:     func(title, s string) string { return strconv.Itoa(gh.AddIssue(title, spec(s))) },
			comment: func(id, user, body string) { n, _ := strconv.Atoi(id); gh.PersonComments(n, user, body) },
			close:   func(id string) { n, _ := strconv.Atoi(id); gh.CloseIssue(n) },
			edit:    func(id, title, s string) { n, _ := strconv.Atoi(id); gh.EditIssue(n, title, spec(s)) },
		})
	})
	t.Run("linear", func(t *testing.T) {
		ln := lfake.New("eng-0a1b2c")
		ln.APIKey = "lin_api_e2e"
		t.Cleanup(ln.Close)
		t.Setenv("LINEAR_API_KEY", "lin_api_e2e")
		hostileAnswerScenario(t, issues{
			tracker: "kind: linear\nendpoint: " + ln.URL + "\nprovider: {project_slug: eng-0a1b2c}\nactive_states: [Todo, In Progress]\n",
			add:     func(title, s string) string { return ln.AddIssue(title, spec(s), "Todo") },
			comment: ln.PersonComments,
			close:   func(id string) { ln.SetState(id, "Canceled") },
			edit:    func(id, title, s string) { ln.Edit(id, title, spec(s)) },
		})
	})
}

func hostileAnswerScenario(t *testing.T, is issues) {
	const question = `{"sim":["input_required","succeeded"],"sim_question":"Which region?","sim_delay":"50ms"}`
	hostile := is.add("Hostile answer", question)
	huge := is.add("Huge answer", question)
	plain := is.add("Plain answer", question)
	long := is.add("Long run", `{"sim":["succeeded"],"sim_delay":"120s"}`)
	badSpec := is.add("Bad spec", `{"sim": [`) // blocked, and its issue stays a candidate on both trackers
	w := wf{Default: "sim", MaxConcurrent: 8, Tracker: is.tracker}
	e := newEnv(t, w, "", testkit.SQLite)
	e.start()
	byTitle := func() map[string]card {
		var cs []card
		out := map[string]card{}
		if stdout, _, code := e.drover(nil, "--json", "card", "ls"); code != 0 || json.Unmarshal([]byte(stdout), &cs) != nil {
			return out // serve has not made the store yet
		}
		for _, c := range cs {
			out[c.Title] = c
		}
		return out
	}
	eventually(t, 30*time.Second, "three parked, one running, one blocked", func() bool {
		cs := byTitle()
		return cs["Hostile answer"].State == "awaiting_input" && cs["Huge answer"].State == "awaiting_input" &&
			cs["Plain answer"].State == "awaiting_input" && cs["Long run"].State == "in_progress" && cs["Bad spec"].State == "blocked"
	})
	time.Sleep(500 * time.Millisecond) // a few polls with nothing new

	is.comment(hostile, "mallory", "Use \x1b[1;31meu-west-1\x1b[0m\a please\x7f.\x1b]0;owned\x07")
	is.comment(huge, "bob", strings.Repeat("a line of pasted log\n", 60000))
	is.comment(plain, "alice", "us-east-2")
	is.close(long)
	is.edit(badSpec, "Spec fixed in the tracker", `{"sim":["succeeded"]}`)
	edited := time.Now()

	var last map[string]card
	defer func() {
		if t.Failed() {
			for title, c := range last {
				t.Logf("%s: %s %s (%s)", c.Identifier, title, c.State, c.StateReason)
			}
		}
	}()
	eventually(t, 3*time.Second, "the close, the edit and both answers on their cards", func() bool {
		cs := byTitle()
		last = cs
		_, renamed := cs["Spec fixed in the tracker"]
		return cs["Long run"].State == "cancelled" && renamed && cs["Plain answer"].State != "awaiting_input" &&
			cs["Hostile answer"].State != "awaiting_input"
	})
	if took := time.Since(edited); took > 3*time.Second {
		t.Errorf("the changes took %v to reach their cards", took)
	}
	cs := byTitle()
	type at struct {
		Type string    `json:"type"`
		At   time.Time `json:"at"`
	}
	// One pass carried them: the syncer's writes lie within a poll interval.
	var stamps []time.Time
	for title, typ := range map[string]string{"Long run": "cancelled", "Spec fixed in the tracker": "edited", "Plain answer": "answered", "Hostile answer": "answered"} {
		var evs []at
		e.jsonOf(&evs, "events", "--card", cs[title].Identifier)
		i := slices.IndexFunc(evs, func(ev at) bool { return ev.Type == typ && ev.At.After(edited.Add(-time.Second)) })
		if i < 0 {
			t.Fatalf("%s has no %s event: %+v", title, typ, evs)
		}
		stamps = append(stamps, evs[i].At)
	}
	slices.SortFunc(stamps, func(a, b time.Time) int { return a.Compare(b) })
	if spread := stamps[len(stamps)-1].Sub(stamps[0]); spread > 200*time.Millisecond {
		t.Errorf("the close, the edit and the answers were written %v apart, want one pass (poll interval 200ms)", spread)
	}

	// The hostile answer was taken without its escapes, and the card says so.
	var hc card
	e.jsonOf(&hc, "card", "show", cs["Hostile answer"].Identifier)
	var answer string
	var said bool
	for _, ev := range hc.Events {
		var d struct{ Answer string }
		_ = json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case "answered":
			answer = d.Answer
		case "tracker_fault":
			var f struct{ Taken bool }
			_ = json.Unmarshal(ev.Data, &f)
			said = f.Taken && strings.Contains(ev.Reason, "terminal escape sequences")
		}
	}
	if !strings.HasPrefix(answer, "Use eu-west-1") || strings.ContainsAny(answer, "\x1b\a\x7f") {
		t.Errorf("the hostile answer reached its card as %q, want its words without the escapes", answer)
	}
	if !said {
		t.Errorf("the hostile answer's card does not say its escapes were removed: %+v", hc.Events)
	}

	// The answer drover cannot take is refused on its card and in status.
	var uc card
	e.jsonOf(&uc, "card", "show", cs["Huge answer"].Identifier)
	if uc.State != "awaiting_input" || !slices.ContainsFunc(uc.Events, func(ev event) bool {
		return ev.Type == "tracker_fault" && strings.Contains(ev.Reason, "not taken as the answer") && strings.Contains(ev.Reason, "limit")
	}) {
		t.Errorf("the huge answer's card is %s with events %+v, want still parked and a tracker_fault saying why", uc.State, uc.Events)
	}
	var st struct {
		Errors []struct {
			Code, Message, Card string
		} `json:"errors"`
	}
	eventually(t, 5*time.Second, "the refused answer in drover status", func() bool {
		e.jsonOf(&st, "status")
		return slices.ContainsFunc(st.Errors, func(x struct{ Code, Message, Card string }) bool {
			return x.Code == "tracker_fault" && x.Card == uc.Identifier && strings.Contains(x.Message, "comment") && strings.Contains(x.Message, "limit")
		})
	})
	if slices.ContainsFunc(st.Errors, func(x struct{ Code, Message, Card string }) bool { return x.Code == "tracker_error" }) {
		t.Errorf("status shows a tracker_error for one issue's answer: %+v", st.Errors)
	}
	if out := e.ok("status"); !strings.Contains(out, "tracker_fault") || !strings.Contains(out, uc.Identifier) {
		t.Errorf("drover status does not name the refused answer:\n%s", out)
	}
	e.kill(syscall.SIGTERM)
}
