package server_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// TestCardRoutesTakeTrackerKeys: every route with a card in its path (and
// the card= filters) takes the key of the tracker issue a card mirrors,
// URL-escaped; a key two trackers share is 400 card_ambiguous naming both,
// and an unknown or hostile one 404 card_not_found saying what was tried.
func TestCardRoutesTakeTrackerKeys(t *testing.T) {
	h := newHarness(t)
	mirror := func(title, tracker, id, key string) board.Card {
		c, err := h.w.Store.CreateCard(context.Background(), "DRV", board.Card{Title: title, State: "ready",
			External: &board.External{Tracker: tracker, ID: id, Key: key}}, "tracker:"+tracker)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	gh := mirror("from github", "github", "7", "acme/app#7")
	lin := mirror("from linear", "linear", "uuid-12", "ENG-12")
	key := url.PathEscape("acme/app#7")
	if key != "acme%2Fapp%237" {
		t.Fatalf("escaped key = %s", key)
	}

	if d := h.want(h.do("GET", "/api/v1/cards/"+key, nil), 200).json(t); d["id"] != gh.ID {
		t.Fatalf("GET /api/v1/cards/%s = %v, want %s", key, d["identifier"], gh.Identifier)
	}
	if d := h.want(h.do("GET", "/api/v1/"+key, nil), 200).json(t); d["issue_id"] != gh.ID {
		t.Fatalf("GET /api/v1/%s (Symphony's issue view) = %v", key, d)
	}
	if d := h.want(h.do("GET", "/api/v1/cards/eng-12/explain", nil), 200).json(t); d["card"] != lin.ID {
		t.Fatalf("explain eng-12 = %v, want %s", d, lin.ID)
	}
	h.want(h.do("PATCH", "/api/v1/cards/"+key, map[string]any{"priority": 1}), 200)
	h.want(h.do("POST", "/api/v1/cards/"+key+"/comment", map[string]any{"text": "seen"}), 201)
	if c := h.want(h.do("POST", "/api/v1/cards/ENG-12/cancel", nil), 200).json(t); c["id"] != lin.ID || c["state"] != "cancelled" {
		t.Fatalf("cancel ENG-12 = %v", c)
	}
	if ev := h.want(h.do("GET", "/api/v1/events?card="+url.QueryEscape("acme/app#7"), nil), 200).json(t); len(ev["events"].([]any)) < 2 {
		t.Fatalf("events?card=acme/app#7 = %v", ev)
	}
	h.want(h.do("GET", "/api/v1/runs?card="+url.QueryEscape("ENG-12"), nil), 200)
	if page := h.want(h.do("GET", "/cards/"+key, nil), 200); !strings.Contains(string(page.Body), "from github") {
		t.Fatalf("dashboard /cards/%s lacks the card", key)
	}

	x1, x2 := mirror("github X-1", "github", "1", "X-1"), mirror("linear X-1", "linear", "u1", "X-1")
	for _, path := range []string{"/api/v1/cards/X-1", "/api/v1/X-1", "/api/v1/cards/x-1/answer"} {
		method, body := "GET", any(nil)
		if strings.HasSuffix(path, "answer") {
			method, body = "POST", map[string]any{"text": "yes"}
		}
		r := h.want(h.do(method, path, body), 400)
		if r.errCode(t) != "card_ambiguous" || !strings.Contains(string(r.Body), x1.Identifier) || !strings.Contains(string(r.Body), x2.Identifier) {
			t.Errorf("%s %s: %s", method, path, r.Body)
		}
	}
	for _, ref := range []string{"ENG-99", "..%2F..%2Fetc%2Fpasswd", "bad%FFkey", strings.Repeat("k", 4000)} {
		r := h.want(h.do("GET", "/api/v1/cards/"+ref, nil), 404)
		if r.errCode(t) != "card_not_found" || !strings.Contains(string(r.Body), "no card has the id, identifier or tracker key") {
			t.Errorf("GET /api/v1/cards/%.20s: %s", ref, r.Body)
		}
	}
}
