package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/status/statustest"
)

// fuzzRoutes are the endpoints that decode a JSON body.
var fuzzRoutes = []struct{ method, path string }{
	{http.MethodPost, "/api/v1/cards"},
	{http.MethodPatch, "/api/v1/cards/%s"},
	{http.MethodPost, "/api/v1/cards/%s/move"},
	{http.MethodPost, "/api/v1/cards/%s/comment"},
	{http.MethodPost, "/api/v1/cards/%s/block"},
	{http.MethodPost, "/api/v1/cards/%s/resume"},
	{http.MethodPost, "/api/v1/cards/%s/reopen"},
	{http.MethodPost, "/api/v1/cards/%s/cancel"},
	{http.MethodPost, "/api/v1/cards/%s/answer"},
	{http.MethodPost, "/api/v1/agents/%s/resume"},
}

// FuzzAPIRequest sends any body to the endpoints that decode JSON, through
// the real handler (guard, routing, decoding, the operator service) on a real
// SQLite store, for a real card or for any card reference. Invariants: no
// panic; no 5xx but 503 (store unavailable); every 4xx carries the JSON
// error envelope with a code and a message; every 2xx is JSON; a created card
// reads back with the title it was given.
func FuzzAPIRequest(f *testing.F) {
	st, cfg := statustest.Open(f)
	h := server.New(server.Options{Store: st, Config: func() *config.Config { return cfg }}).Handler()
	c, err := st.CreateCard(context.Background(), "DRV", board.Card{Title: "seed", State: "ready", Labels: []string{},
		BlockedBy: []string{}, Spec: json.RawMessage(`{}`)}, "operator")
	if err != nil {
		f.Fatal(err)
	}
	real := c.Identifier

	f.Add(uint8(0), "", []byte(`{"title":"Fix the login page","body":"steps","labels":["bug"],"priority":2,"spec":{"plan":"x"}}`))
	f.Add(uint8(0), "", []byte(`{"title":"../../etc/passwd","body":"$(touch CANARY) `+"`id`"+`","spec":{"a":"{{ card.spec }}"}}`))
	f.Add(uint8(0), "", []byte(`{"title":"{% for i in (1..1000000000) %}x{% endfor %}","state":"done","agent":"../x"}`))
	f.Add(uint8(0), "", []byte(`{"title":"x","spec":`+strings.Repeat(`{"a":`, 100)+`1`+strings.Repeat(`}`, 100)+`}`))
	f.Add(uint8(0), "", []byte(`{"title":"x","priority":99999999999999999999999,"labels":null,"blocked_by":["DRV-1","DRV-1","nope"]}`))
	f.Add(uint8(0), "", []byte("{\"title\":\"\xff\xfe\"}"))
	f.Add(uint8(0), "", []byte(`{"title":"nul \u0000 byte","body":"\u0000"}`))
	f.Add(uint8(0), "", []byte(`{"title":"x","titel":"typo"}`))
	f.Add(uint8(0), "", []byte(`{"title":"x"} {"title":"y"}`))
	f.Add(uint8(0), "", []byte(`[1,2,3]`))
	f.Add(uint8(1), "", []byte(`{"title":"renamed","spec":null,"state":"done"}`))
	f.Add(uint8(3), "../../etc/passwd", []byte(`{"title":"x"}`))
	f.Add(uint8(2), "", []byte(`{"state":"in-progress","reason":"go"}`))
	f.Add(uint8(2), "", []byte(`{"state":"nope"}`))
	f.Add(uint8(4), "", []byte(`{"text":"hello","reason":"x"}`))
	f.Add(uint8(4), "", []byte(`{"reason":"`+strings.Repeat("r", 70000)+`"}`))
	f.Add(uint8(5), "", []byte(``))
	f.Add(uint8(7), "%2e%2e%2f", []byte(`{"reason":1e999}`))
	f.Add(uint8(8), "", []byte(`{"text":"yes, go ahead"}`))
	f.Add(uint8(9), "claude", []byte(`{}`))
	f.Fuzz(func(t *testing.T, which uint8, ref string, body []byte) {
		rt := fuzzRoutes[int(which)%len(fuzzRoutes)]
		id := real
		if ref != "" || which >= uint8(len(fuzzRoutes)) {
			id = url.PathEscape(ref)
		}
		path := strings.Replace(rt.path, "%s", id, 1)
		req := httptest.NewRequest(rt.method, "http://127.0.0.1"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code, out := rec.Code, rec.Body.Bytes()
		switch {
		case code == http.StatusServiceUnavailable:
		case code >= 500:
			t.Fatalf("%s %s %q: %d %s", rt.method, path, body, code, out)
		case code >= 400:
			var e server.ErrorBody
			if err := json.Unmarshal(out, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %s %q: %d without the error envelope: %s", rt.method, path, body, code, out)
			}
		case code >= 200 && code < 300:
			if !json.Valid(out) {
				t.Fatalf("%s %s: %d not JSON: %s", rt.method, path, code, out)
			}
		}
		if code == http.StatusCreated && rt.path == "/api/v1/cards" {
			var in, got struct{ Title, Identifier string }
			json.Unmarshal(body, &in)
			in.Title = strings.TrimSpace(in.Title) // the one normalization a title gets
			if err := json.Unmarshal(out, &got); err != nil || got.Title != in.Title {
				t.Fatalf("created %q from %q (%v)", got.Title, in.Title, err)
			}
			g := httptest.NewRecorder()
			h.ServeHTTP(g, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/cards/"+got.Identifier, nil))
			var back struct{ Title string }
			if g.Code != 200 || json.Unmarshal(g.Body.Bytes(), &back) != nil || back.Title != in.Title {
				t.Fatalf("GET %s: %d %q, want title %q", got.Identifier, g.Code, back.Title, in.Title)
			}
		}
	})
}
