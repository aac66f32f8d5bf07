package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/testkit"
)

// mirror inserts a card mirroring a tracker issue, as a tracker sync would.
func (e *env) mirror(title, tracker, id, key string) board.Card {
	e.t.Helper()
	st := testkit.Open(e.t, e.dsn)
	defer st.Close()
	c, err := st.CreateCard(context.Background(), "DRV", board.Card{Title: title, State: "ready", Labels: []string{}, BlockedBy: []string{},
		External: &board.External{Tracker: tracker, ID: id, Key: key}}, "tracker:"+tracker)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestCardsByTrackerKey: every command that takes a card ID takes the key
// of the tracker issue the card mirrors (acme/app#7, ENG-12) as well; a key
// two trackers share is refused naming both cards, an unknown one names
// what was tried.
func TestCardsByTrackerKey(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "native")
	gh := e.mirror("from github", "github", "7", "acme/app#7")
	lin := e.mirror("from linear", "linear", "uuid-12", "ENG-12")

	var c board.Card
	e.okJSON(&c, "card", "show", "acme/app#7")
	if c.ID != gh.ID {
		t.Fatalf("card show acme/app#7 = %s, want %s", c.Identifier, gh.Identifier)
	}
	e.okJSON(&c, "card", "show", "eng-12")
	if c.ID != lin.ID {
		t.Fatalf("card show eng-12 = %s, want %s", c.Identifier, lin.Identifier)
	}
	if out := e.ok("explain", "ENG-12"); !strings.HasPrefix(out, lin.Identifier+"  from linear") {
		t.Fatalf("explain ENG-12:\n%s", out)
	}
	e.ok("card", "comment", "acme/app#7", "looked at it")
	e.ok("card", "edit", "acme/app#7", "--priority", "2")
	e.ok("card", "add", "--title", "after the issue", "--blocked-by", "acme/app#7")
	e.ok("card", "block", "acme/app#7", "--reason", "waiting on design")
	e.ok("card", "resume", "acme/app#7")
	e.ok("card", "mv", "ENG-12", "backlog")
	e.ok("card", "cancel", "ENG-12")
	e.ok("card", "reopen", "ENG-12")
	e.ok("runs", "ENG-12")
	var evs []board.Event
	e.okJSON(&evs, "events", "--card", "acme/app#7")
	if len(evs) == 0 || evs[0].CardID != gh.ID || !hasEvent(evs, board.EvCommented) {
		t.Fatalf("events --card acme/app#7 = %+v, want %s's with its comment", evs, gh.Identifier)
	}
	e.okJSON(&c, "card", "show", gh.Identifier)
	if c.Priority != 2 || c.State != "ready" {
		t.Fatalf("after the actions by key: %s priority %d state %s", c.Identifier, c.Priority, c.State)
	}
	var after board.Card
	e.okJSON(&after, "card", "show", "DRV-4")
	if len(after.BlockedBy) != 1 || after.BlockedBy[0] != gh.ID {
		t.Fatalf("--blocked-by acme/app#7 stored %v, want [%s]", after.BlockedBy, gh.ID)
	}

	e.mirror("github X-1", "github", "1", "X-1")
	e.mirror("linear X-1", "linear", "u1", "X-1")
	if errs := e.fails(2, "card", "show", "X-1"); !strings.Contains(errs, "DRV-5 (github issue X-1)") || !strings.Contains(errs, "DRV-6 (linear issue X-1)") {
		t.Fatalf("ambiguous key: stderr %q", errs)
	}
	if errs := e.fails(2, "--json", "explain", "x-1"); !strings.Contains(errs, `"code":"card_ambiguous"`) {
		t.Fatalf("ambiguous key with --json: stderr %q", errs)
	}
	for _, ref := range []string{"ENG-99", "../../etc/passwd", "bad\xffkey", strings.Repeat("k", 5000)} {
		errs := e.fails(2, "card", "answer", ref, "yes")
		if !strings.Contains(errs, "no card has the id, identifier or tracker key") || strings.Count(errs, "\n") != 1 || len(errs) > 300 {
			t.Errorf("card answer %.20q: stderr %q", ref, errs)
		}
	}
}

func hasEvent(evs []board.Event, typ string) bool {
	for _, ev := range evs {
		if ev.Type == typ {
			return true
		}
	}
	return false
}
