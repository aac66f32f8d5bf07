package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/store"
)

func cardCount(t *testing.T, st store.Store) (int, int64) {
	t.Helper()
	cs, err := st.ListCards(context.Background(), store.CardFilter{})
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := st.ListEvents(context.Background(), store.EventFilter{Newest: true, Limit: 1})
	return len(cs), evs[0].Seq
}

func TestBodyLimitsAndUTF8(t *testing.T) {
	h := newHarness(t)
	n0, seq0 := cardCount(t, h.w.Store)
	huge := `{"title":"big","body":"` + strings.Repeat("a", server.DefaultMaxBody+10) + `"}`
	if c := h.want(h.do("POST", "/api/v1/cards", huge), 413).errCode(t); c != "body_too_large" {
		t.Fatal(c)
	}
	if c := h.want(h.do("POST", "/api/v1/cards/"+h.w.Ready.Identifier+"/comment", huge), 413).errCode(t); c != "body_too_large" {
		t.Fatal(c)
	}
	bad := []byte(`{"title":"caf` + "\xff\xfe" + `"}`)
	if c := h.want(h.do("POST", "/api/v1/cards", bad), 400).errCode(t); c != "invalid_utf8" {
		t.Fatal(c)
	}
	if c := h.want(h.do("POST", "/api/v1/cards/"+h.w.Ready.Identifier+"/comment", []byte(`{"text":"`+"\xc3\x28"+`"}`)), 400).errCode(t); c != "invalid_utf8" {
		t.Fatal(c)
	}
	if n, seq := cardCount(t, h.w.Store); n != n0 || seq != seq0 {
		t.Fatalf("a refused request changed the store: %d cards (was %d), last event %d (was %d)", n, n0, seq, seq0)
	}
}

func TestTokenRequired(t *testing.T) {
	h := newHarness(t, func(o *server.Options) { o.AuthToken = "s3cret-token" })
	n0, seq0 := cardCount(t, h.w.Store)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/state", ""}, {"GET", "/", ""}, {"GET", "/metrics", ""}, {"GET", "/api/v1/events/stream", ""},
		{"POST", "/api/v1/cards", `{"title":"sneaky"}`}, {"POST", "/api/v1/cards/" + h.w.Blocked.Identifier + "/resume", ""},
		{"POST", "/api/v1/agents/script/resume", ""}, {"PATCH", "/api/v1/cards/" + h.w.Ready.Identifier, `{"title":"x"}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		for _, auth := range []string{"", "Bearer wrong", "Basic czNjcmV0LXRva2Vu"} {
			r := h.want(h.do(c.method, c.path, body, "Authorization", auth), 401)
			if r.errCode(t) != "unauthorized" || r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s %s: %s", c.method, c.path, r.Body)
			}
		}
	}
	if n, seq := cardCount(t, h.w.Store); n != n0 || seq != seq0 {
		t.Fatalf("unauthorized requests changed the store")
	}
	h.want(h.do("GET", "/api/v1/state", nil), 200)
	h.want(h.do("POST", "/api/v1/cards", map[string]any{"title": "allowed"}), 201)
	// The scheme name is case-insensitive (RFC 9110 section 11.1); the token is not.
	for _, scheme := range []string{"bearer", "BEARER", "bEaReR"} {
		h.want(h.do("GET", "/api/v1/state", nil, "Authorization", scheme+" s3cret-token"), 200)
		h.want(h.do("POST", "/api/v1/cards", map[string]any{"title": "allowed " + scheme}, "Authorization", scheme+" s3cret-token"), 201)
	}
	h.want(h.do("GET", "/api/v1/state", nil, "Authorization", "bearer S3CRET-TOKEN"), 401)

	// A browser logs in once with ?token= and gets a cookie.
	h.validate = false
	jar := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := jar.Get(h.srv.URL + "/?token=s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 || !res.Cookies()[0].HttpOnly {
		t.Fatalf("login: %d %v", res.StatusCode, res.Cookies())
	}
	cookie := res.Cookies()[0].Name + "=" + res.Cookies()[0].Value
	h.want(h.do("GET", "/", nil, "Authorization", "", "Cookie", cookie), 200)
	// Cookie-authenticated writes need the CSRF token.
	if c := h.want(h.do("POST", "/api/v1/refresh", nil, "Authorization", "", "Cookie", cookie), 403).errCode(t); c != "csrf" {
		t.Fatal(c)
	}
}

func TestCSRF(t *testing.T) {
	h := newHarness(t)
	n0, seq0 := cardCount(t, h.w.Store)
	body := map[string]any{"title": "forged"}
	h.want(h.do("POST", "/api/v1/cards", body, "Origin", "https://evil.example"), 403)
	h.want(h.do("POST", "/api/v1/cards", body, "Sec-Fetch-Site", "cross-site"), 403)
	h.want(h.do("POST", "/api/v1/cards/"+h.w.Blocked.Identifier+"/resume", nil, "Sec-Fetch-Site", "same-site"), 403)
	h.want(h.do("POST", "/api/v1/cards", `{"title":"forged"}`, "Content-Type", "text/plain"), 415)
	h.want(h.do("POST", "/api/v1/cards", `title=forged`, "Content-Type", "application/x-www-form-urlencoded"), 415)
	h.want(h.do("POST", "/api/v1/cards", body, "X-CSRF-Token", "stale"), 403)
	if n, seq := cardCount(t, h.w.Store); n != n0 || seq != seq0 {
		t.Fatalf("forged requests changed the store")
	}
	h.want(h.do("POST", "/api/v1/cards", body, "Origin", h.srv.URL, "Sec-Fetch-Site", "same-origin"), 201)
}

func TestLoopbackHostAndListen(t *testing.T) {
	st, _ := cardStore(t)
	s := server.New(server.Options{Store: st, LoopbackOnly: true})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/v1/state", nil)
	req.Host = "attacker.example:4840"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("rebinding host: %d", rec.Code)
	}
	for _, host := range []string{"127.0.0.1:4840", "localhost:4840", "[::1]:4840"} {
		rec = httptest.NewRecorder()
		req = httptest.NewRequest("GET", "/healthz", nil)
		req.Host = host
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%s: %d", host, rec.Code)
		}
	}
	if err := server.New(server.Options{Store: st}).ListenAndServe(context.Background(), "0.0.0.0", 0); !errors.Is(err, server.ErrNoToken) {
		t.Fatalf("non-loopback without a token: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := server.New(server.Options{Store: st}).ListenAndServe(ctx, "", 0); err != nil {
		t.Fatalf("loopback: %v", err)
	}
}
