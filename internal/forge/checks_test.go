package forge

import (
	"slices"
	"testing"
)

func TestChecks(t *testing.T) {
	ok := func(id int64, name string) Check {
		return Check{ID: id, Name: name, Status: "completed", Conclusion: "success"}
	}
	bad := func(id int64, name string) Check {
		return Check{ID: id, Name: name, Status: "completed", Conclusion: "failure"}
	}
	running := func(id int64, name string) Check { return Check{ID: id, Name: name, Status: "in_progress"} }
	for _, tc := range []struct {
		name     string
		required []string
		runs     []Check
		state    string
		failed   []string
		pending  []string
		missing  []string
	}{
		{name: "no runs, none required", state: ChecksNone},
		{name: "every run decides: all pass", runs: []Check{ok(1, "test"), ok(2, "lint")}, state: ChecksPassing},
		{name: "every run decides: one fails", runs: []Check{ok(1, "test"), bad(2, "lint")}, state: ChecksFailing, failed: []string{"lint"}},
		{name: "every run decides: one runs", runs: []Check{ok(1, "test"), running(2, "lint")}, state: ChecksPending, pending: []string{"lint"}},
		{name: "failure wins over pending", runs: []Check{bad(1, "test"), running(2, "lint")}, state: ChecksFailing, failed: []string{"test"}, pending: []string{"lint"}},
		{name: "neutral and skipped pass", runs: []Check{{ID: 1, Name: "a", Status: "completed", Conclusion: "neutral"}, {ID: 2, Name: "b", Status: "completed", Conclusion: "skipped"}}, state: ChecksPassing},
		{name: "timed_out, cancelled, action_required fail", runs: []Check{
			{ID: 1, Name: "a", Status: "completed", Conclusion: "timed_out"},
			{ID: 2, Name: "b", Status: "completed", Conclusion: "cancelled"},
			{ID: 3, Name: "c", Status: "completed", Conclusion: "action_required"}}, state: ChecksFailing, failed: []string{"a", "b", "c"}},
		{name: "required: an unrequired failure does not decide", required: []string{"test"}, runs: []Check{ok(1, "test"), bad(2, "lint")}, state: ChecksPassing},
		{name: "required: not reported yet is pending", required: []string{"test", "build"}, runs: []Check{ok(1, "test")}, state: ChecksPending, missing: []string{"build"}},
		{name: "required: named twice counts once", required: []string{"test", "test"}, runs: []Check{bad(1, "test")}, state: ChecksFailing, failed: []string{"test"}},
		{name: "required with no runs at all", required: []string{"test"}, state: ChecksPending, missing: []string{"test"}},
		{name: "a re-run that passed replaces the failure", runs: []Check{bad(1, "test"), ok(5, "test")}, state: ChecksPassing},
		{name: "the newest run counts whatever the order", runs: []Check{ok(5, "test"), bad(1, "test")}, state: ChecksPassing},
		{name: "a re-run in progress replaces the failure", runs: []Check{bad(1, "test"), running(2, "test")}, state: ChecksPending, pending: []string{"test"}},
		{name: "names are exact", required: []string{"Test"}, runs: []Check{ok(1, "test")}, state: ChecksPending, missing: []string{"Test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Checks(tc.required, tc.runs)
			names := func(cs []Check) []string {
				var out []string
				for _, c := range cs {
					out = append(out, c.Name)
				}
				return out
			}
			if v.State != tc.state || !slices.Equal(names(v.Failed), tc.failed) || !slices.Equal(names(v.Pending), tc.pending) || !slices.Equal(v.Missing, tc.missing) {
				t.Errorf("got %s failed %v pending %v missing %v; want %s failed %v pending %v missing %v",
					v.State, names(v.Failed), names(v.Pending), v.Missing, tc.state, tc.failed, tc.pending, tc.missing)
			}
		})
	}
}
