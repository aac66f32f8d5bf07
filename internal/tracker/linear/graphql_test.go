package linear_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	fake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/linear"
)

func graphqlFake(t *testing.T) (*fake.Server, tracker.Config) {
	t.Helper()
	ln := fake.New("eng-project-1a2b")
	ln.APIKey = "lin_api_secret"
	t.Cleanup(ln.Close)
	return ln, tracker.Config{Kind: tracker.KindLinear, Endpoint: ln.URL, APIKey: "lin_api_secret"}
}

// TestGraphQLAnswers: an agent's query reaches Linear with the configured
// key and variables, and the answer's JSON text comes back as it is.
func TestGraphQLAnswers(t *testing.T) {
	ln, cfg := graphqlFake(t)
	out, err := linear.GraphQL(context.Background(), cfg, nil, "query Viewer { viewer { id name } }", json.RawMessage(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"user-drover"`) || strings.Contains(out, "lin_api_secret") {
		t.Errorf("answer %s", out)
	}
	log := ln.Log()
	if len(log) != 1 || log[0].Op != "Viewer" || log[0].Auth != "lin_api_secret" || log[0].Vars["x"] != 1.0 || log[0].Status != http.StatusOK {
		t.Errorf("Linear got %+v", log)
	}
}

// TestGraphQLFailures: every failure is an error for the model to read,
// with what went wrong and never the key: bad arguments before any
// request, GraphQL errors in a 200 answer, an HTTP failure, an answer over
// the bound, a refused key.
func TestGraphQLFailures(t *testing.T) {
	cases := []struct {
		name, query, vars string
		fault             *fake.Fault
		key               string
		want              string
		requests          int
	}{
		{name: "empty query", query: "  ", want: "query is empty"},
		{name: "variables not an object", query: "query Viewer { viewer { id } }", vars: `[1]`, want: "variables must be a JSON object"},
		{name: "request too large", query: "query Viewer { viewer { id } } #" + strings.Repeat("x", linear.MaxQueryBytes), want: "over drover's"},
		{name: "graphql error", query: "query Nope { nope }", want: "returned GraphQL errors: {\"data\":null", requests: 1},
		{name: "http 500", query: "query Viewer { viewer { id } }", fault: &fake.Fault{Status: 502, Body: "bad gateway", Times: 1}, want: "HTTP 502: bad gateway", requests: 1},
		{name: "answer too large", query: "query Viewer { viewer { id } }", fault: &fake.Fault{Status: 200, Body: `{"data":"` + strings.Repeat("x", linear.MaxAnswerBytes) + `"}`, Times: 1}, want: "ask for fewer fields", requests: 1},
		{name: "not json", query: "query Viewer { viewer { id } }", fault: &fake.Fault{Status: 200, Body: "<html>", Times: 1}, want: "not JSON: <html>", requests: 1},
		{name: "wrong key", query: "query Viewer { viewer { id } }", key: "lin_api_wrong", want: "HTTP 401", requests: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ln, cfg := graphqlFake(t)
			if c.fault != nil {
				ln.Inject(*c.fault)
			}
			if c.key != "" {
				cfg.APIKey = c.key
			}
			_, err := linear.GraphQL(context.Background(), cfg, nil, c.query, json.RawMessage(c.vars))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), cfg.APIKey) {
				t.Errorf("error %v, want one with %q and without the key", err, c.want)
			}
			if n := len(ln.Log()); n != c.requests {
				t.Errorf("%d requests reached Linear, want %d", n, c.requests)
			}
		})
	}
}
