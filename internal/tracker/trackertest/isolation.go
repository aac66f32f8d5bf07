package trackertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

// One issue's data stops only its own card: what the sync can take of it
// is taken, the rest is skipped with a reason on the card and in the
// sync's faults, and every other issue's close, edit and answer reaches
// its card in the same pass.

// A person's answer holding terminal escapes (pasted output), a BEL and a
// DEL is taken without them; in the same pass a running card whose issue
// was closed is cancelled and another issue's edit is copied.
func testHostileAnswer(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	asks := w.Issue("Asks a question", `{"sim": ["input_required", "succeeded"], "sim_question": "Which database?", "sim_delay": "10ms"}`)
	long := w.Issue("Long one", `{"sim": ["succeeded"], "sim_delay": "60s"}`)
	quick := w.Issue("Quick one", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Serve()
	w.WaitState(asks, "awaiting_input")
	w.WaitRunning(long)
	w.WaitState(quick, "review")
	w.Fake.PersonComments(asks, "alice", "Use \x1b[1;31mPostgreSQL\x1b[0m\a 16\x7f.\n\x1b]0;owned\x07")
	w.Fake.Close(long)
	w.Fake.Edit(quick, "Quick one, renamed", "Please do it.\n\n```drover\n{\"sim\": [\"succeeded\"]}\n```\n")
	w.SyncOK()
	if c := w.WaitState(long, "cancelled"); len(w.Runs(c)) != 1 || w.Runs(c)[0].Outcome != board.OutcomeCancelled {
		t.Errorf("the closed issue's run: %+v, want cancelled", w.Runs(c))
	}
	if c := w.Card(quick); c.Title != "Quick one, renamed" {
		t.Errorf("the edited issue's card is titled %q", c.Title)
	}
	answer, actor, ok := w.Answered(asks)
	if !ok || actor != "tracker:"+kit.Kind+":alice" || !strings.HasPrefix(answer, "Use PostgreSQL") || strings.ContainsAny(answer, "\x1b\a\x7f") {
		t.Fatalf("answer %q by %q (%v), want alice's words without the escapes", answer, actor, ok)
	}
	c := w.WaitState(asks, "review")
	if e := lastOf(w.Events(c), tracker.EvFault); e == nil || !strings.Contains(e.Reason, "terminal escape sequences") ||
		!strings.Contains(string(e.Data), `"taken":true`) {
		t.Errorf("no tracker_fault event saying the escapes were removed: %+v", e)
	}
	if st := w.Statuses(); len(st) != 0 {
		t.Errorf("statuses %q, want none: the pass went through", st)
	}
}

// An answer drover cannot take even so (over a card's body limit) is
// skipped: the card says why and stays parked, the sync's faults name the
// issue and the comment, and the next person's comment answers it.
func testUnusableAnswer(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	asks := w.Issue("Asks", `{}`)
	other := w.Issue("Other", `{}`)
	w.SyncOK()
	w.Park(asks, "Which database?")
	w.Fake.PersonComments(asks, "bob", strings.Repeat("log line\n", board.MaxBody/9+1))
	w.Fake.Close(other)
	w.SyncOK()
	if c := w.Card(other); c.State != "cancelled" {
		t.Fatalf("the closed issue's card is %s, want cancelled", c.State)
	}
	c := w.Card(asks)
	if c.State != "awaiting_input" {
		t.Fatalf("card %s after an answer it cannot take, want still awaiting_input", c.State)
	}
	e := lastOf(w.Events(c), tracker.EvFault)
	if e == nil || !strings.Contains(e.Reason, "not taken as the answer") || !strings.Contains(e.Reason, "limit") ||
		!strings.Contains(string(e.Data), `"taken":false`) || !strings.Contains(string(e.Data), `"comment_id"`) {
		t.Fatalf("tracker_fault event %+v, want the skipped comment and why", e)
	}
	fs := w.Sync.CurrentFaults()
	if len(fs) != 1 || fs[0].Card != c.Identifier || fs[0].Comment == "" || fs[0].Stage != "answer" || !strings.Contains(fs[0].Reason, "limit") {
		t.Fatalf("faults %+v, want the skipped comment named", fs)
	}
	w.SyncOK() // found again: not written twice
	if n := countOf(w.Events(w.Card(asks)), tracker.EvFault); n != 1 {
		t.Errorf("%d tracker_fault events after a second pass, want 1", n)
	}
	w.Fake.PersonComments(asks, "bob", "Use SQLite.")
	w.SyncOK()
	if answer, _, ok := w.Answered(asks); !ok || answer != "Use SQLite." {
		t.Fatalf("answer %q (%v), want the next comment", answer, ok)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 0 {
		t.Errorf("faults %+v after the card was answered, want none", fs)
	}
}

// The tracker failing for one issue alone (every request about it) holds
// only that issue's card: another closed issue is cancelled in the same
// pass, the failing one is named in the sync's faults (no tracker_error),
// and once the tracker answers for it again the next poll settles it.
func testTrackerFailsForOneIssue(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	bad := w.Issue("Bad", `{}`)
	good := w.Issue("Good", `{}`)
	asks := w.Issue("Asks", `{}`)
	w.SyncOK()
	w.Park(asks, "Which?")
	w.Fake.Close(bad)
	w.Fake.Close(good)
	w.Fake.FailFor(bad)
	w.SyncOK()
	if c := w.Card(good); c.State != "cancelled" {
		t.Fatalf("the other closed issue's card is %s, want cancelled", c.State)
	}
	if c := w.Card(bad); c.State != "ready" {
		t.Fatalf("the card of the issue the tracker fails for is %s, want ready until it is read", c.State)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 1 || fs[0].Card != w.Card(bad).Identifier || fs[0].Stage != "refresh" {
		t.Fatalf("faults %+v, want the one issue's refresh", fs)
	}
	if st := w.Statuses(); len(st) != 0 {
		t.Errorf("statuses %q, want no tracker_error for one issue", st)
	}
	w.Fake.PersonComments(asks, "carol", "The second.") // still answered while bad fails
	w.Fake.Up()
	w.SyncOK()
	if c := w.Card(bad); c.State != "cancelled" {
		t.Fatalf("the card is %s once its issue is read, want cancelled", c.State)
	}
	if answer, _, ok := w.Answered(asks); !ok || answer != "The second." {
		t.Errorf("answer %q (%v)", answer, ok)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 0 {
		t.Errorf("faults %+v, want none", fs)
	}
}

// An issue the tracker sends in a shape drover cannot read (a field of the
// wrong type) holds only its own card, which keeps its last good input and
// says why; a new issue sent so gets no card yet; the other issues' close
// and edit land in the same pass; once the issue reads again, its edit is
// copied and the new one becomes a card.
func testUnreadableIssue(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	bad := w.Issue("Bad", `{}`)
	closed := w.Issue("Closed", `{}`)
	edited := w.Issue("Edited", `{}`)
	w.SyncOK()
	before := w.Card(bad)
	w.Fake.Edit(bad, "Bad, second title", "Please do it.\n\n```drover\n{}\n```\n")
	w.Fake.Corrupt(bad)
	fresh := w.Issue("Fresh, unreadable", `{}`)
	w.Fake.Corrupt(fresh)
	w.Fake.Close(closed)
	w.Fake.Edit(edited, "Edited, second title", "Please do it.\n\n```drover\n{}\n```\n")
	w.SyncOK()
	if c := w.Card(closed); c.State != "cancelled" {
		t.Errorf("the closed issue's card is %s, want cancelled", c.State)
	}
	if c := w.Card(edited); c.Title != "Edited, second title" {
		t.Errorf("the edited issue's card is titled %q", c.Title)
	}
	c := w.Card(bad)
	if c.Title != before.Title || c.State != before.State {
		t.Errorf("the unreadable issue's card is %s %q, want it as it was", c.State, c.Title)
	}
	if e := lastOf(w.Events(c), tracker.EvFault); e == nil || !strings.Contains(e.Reason, "does not decode") {
		t.Errorf("tracker_fault event %+v, want the issue named unreadable", e)
	}
	if n := len(w.Cards()); n != 3 {
		t.Errorf("%d cards, want 3: the unreadable new issue gets none yet", n)
	}
	fs := w.Sync.CurrentFaults()
	if len(fs) != 2 || fs[0].Stage != "read" || fs[1].Stage != "read" {
		t.Fatalf("faults %+v, want both unreadable issues", fs)
	}
	w.Fake.Up()
	w.SyncOK()
	if c := w.Card(bad); c.Title != "Bad, second title" {
		t.Errorf("once readable, the card is titled %q, want the edit", c.Title)
	}
	if c := w.Card(fresh); c.State != "ready" {
		t.Errorf("once readable, the new issue's card is %s", c.State)
	}
	if fs := w.Sync.CurrentFaults(); len(fs) != 0 {
		t.Errorf("faults %+v once readable, want none", fs)
	}
}

// failingStore fails ListCards, as a store whose database broke would.
type failingStore struct{ store.Store }

func (failingStore) ListCards(context.Context, store.CardFilter) ([]board.Card, error) {
	return nil, errors.New("disk I/O error")
}

// A pass that fails for the store's sake is reported through Status (the
// node's tracker_error) and logged once, and cleared once a pass goes
// through.
func testFailedPassShows(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	w.Issue("x", `{}`)
	w.Sync.Store = failingStore{w.Store}
	for range 2 {
		if err := w.Sync.Pass(context.Background()); err == nil {
			t.Fatal("a pass on a failing store went through")
		}
	}
	if st := w.Statuses(); len(st) != 1 || !strings.Contains(st[0], "sync pass failed") || !strings.Contains(st[0], "disk I/O error") {
		t.Fatalf("statuses %q, want the failed pass once", st)
	}
	if n := w.Logs.Count("tracker sync pass failed"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, w.Logs)
	}
	w.Sync.Store = w.Store
	w.SyncOK()
	if st := w.Statuses(); len(st) != 2 || st[1] != "" {
		t.Errorf("statuses %q, want it cleared", st)
	}
}

// A projection the tracker keeps failing for one card holds only that
// card's rows: another card's moves are shown meanwhile.
func testProjectionOfOneCardFails(t *testing.T, kit Kit) {
	w := NewWorld(t, kit)
	bad := w.Issue("Bad", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	good := w.Issue("Good", `{"sim": ["succeeded"], "sim_delay": "10ms"}`)
	w.SyncOK()
	w.Fake.FailFor(bad)
	w.Del.BaseBackoff, w.Del.MaxBackoff = time.Minute, time.Minute
	w.Serve()
	w.WaitState(bad, "review")
	w.WaitState(good, "review")
	ctx := context.Background()
	for range 5 {
		if _, err := w.Proj.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Del.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w.Shows(good, board.RoleCompleted)
	rows, _ := w.Store.ListOutbox(ctx, store.OutboxFilter{CardID: w.Card(bad).ID, Pending: store.Bool(true)})
	if len(rows) == 0 || rows[0].LastError == "" {
		t.Fatalf("the failing card's projections %+v, want pending with the error", rows)
	}
	w.Fake.Up()
	w.Del.Now = func() time.Time { return time.Now().Add(5 * time.Minute) }
	w.Project()
	w.Shows(bad, board.RoleCompleted)
}

// Property: random hostile content in one issue — control characters,
// escapes, NULs, bidi overrides, huge text, a broken spec, odd labels, in
// its title, body, labels, edits and comments, the tracker failing for it,
// the issue closed, sent unreadable — never changes what happens to the other issues in the
// same pass: an edit is copied, a close cancels, an answer is taken, a new
// issue becomes a card. The hostile issue's card gets only text a card may
// hold, and the pass never fails.
func testHostileIssueProperty(t *testing.T, kit Kit) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { hostileRound(t, kit, uint64(seed)) })
	}
}

func hostileRound(t *testing.T, kit Kit, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 28))
	w := NewWorld(t, kit)
	h := hostile{rng}
	spec := "Please do it.\n\n```drover\n{}\n```\n"
	edited := w.Issue("Edited", `{}`)
	closed := w.Issue("Closed", `{}`)
	asks := w.Issue("Asks", `{}`)
	bad := w.Fake.AddIssue(h.pick(h.text(), "Hostile"), h.pick(h.text(), spec), h.labels()...)
	w.SyncOK()
	w.Park(asks, "Which database?")
	parked := rng.IntN(2) == 0
	if parked {
		w.Park(bad, "Which one?")
	}
	var did []string
	if rng.IntN(2) == 0 {
		w.Fake.Edit(bad, h.text(), h.text())
		did = append(did, "edited")
	}
	for range rng.IntN(3) {
		w.Fake.PersonComments(bad, h.pick("mallory", h.text()), h.text())
		did = append(did, "commented")
	}
	if rng.IntN(3) == 0 {
		w.Fake.Close(bad)
		did = append(did, "closed")
	}
	if rng.IntN(3) == 0 {
		w.Fake.FailFor(bad)
		did = append(did, "failing")
	}
	if rng.IntN(4) == 0 {
		w.Fake.Corrupt(bad)
		did = append(did, "unreadable")
	}
	// What the other issues' people do, in the same poll.
	w.Fake.Edit(edited, "Edited, second title", spec)
	w.Fake.Close(closed)
	w.Fake.PersonComments(asks, "alice", "Use PostgreSQL.")
	fresh := w.Issue("New after the first sync", `{}`)
	if err := w.Sync.Pass(context.Background()); err != nil {
		t.Fatalf("seed %d (%v): the pass failed: %v", seed, did, err)
	}
	if c := w.Card(edited); c.Title != "Edited, second title" {
		t.Errorf("seed %d (%v): the edit did not reach its card: %q", seed, did, c.Title)
	}
	if c := w.Card(closed); c.State != "cancelled" {
		t.Errorf("seed %d (%v): the closed issue's card is %s", seed, did, c.State)
	}
	if a, _, ok := w.Answered(asks); !ok || a != "Use PostgreSQL." {
		t.Errorf("seed %d (%v): the answer did not reach its card: %q", seed, did, a)
	}
	if c := w.Card(fresh); c.State != "ready" {
		t.Errorf("seed %d (%v): the new issue's card is %s", seed, did, c.State)
	}
	for _, id := range []string{edited, closed, asks, fresh} {
		if n := countOf(w.Events(w.Card(id)), tracker.EvFault); n != 0 {
			t.Errorf("seed %d (%v): %d tracker_fault events on a card of a plain issue", seed, did, n)
		}
	}
	if st := w.Statuses(); len(st) != 0 {
		t.Errorf("seed %d (%v): statuses %q: one issue's content is no tracker_error", seed, did, st)
	}
	// The hostile issue's card holds only what a card may hold.
	c := w.Card(bad)
	if err := board.ValidateTitle(c.Title); err != nil {
		t.Errorf("seed %d (%v): its card's title %q: %v", seed, did, c.Title, err)
	}
	if err := board.ValidateBody(c.Body); err != nil {
		t.Errorf("seed %d (%v): its card's body: %v", seed, did, err)
	}
	if err := board.ValidateLabels(c.Labels); err != nil {
		t.Errorf("seed %d (%v): its card's labels %q: %v", seed, did, c.Labels, err)
	}
	if a, _, ok := w.Answered(bad); ok {
		if err := board.ValidateBody(a); err != nil || strings.ContainsAny(a, "\x1b\x7f") {
			t.Errorf("seed %d (%v): its answer %q: %v", seed, did, a, err)
		}
	}
}

// hostile makes text people should not paste, but do.
type hostile struct{ rng *rand.Rand }

var hostileBits = []string{
	"\x1b[2J", "\x1b[1;31m", "\x1b]0;owned\x07", "\x1b]8;;http://evil/\x1b\\", "\u009b6n", "\u009d52;c;ZWNobyBoaQ==\u009c",
	"\x00", "\x7f", "\a", "\b", "\r", "\v", "\f", "\u0085", "\u202e", "\u2066", "\u200b", "\ufeff", "\u2028",
	"```drover\n[1, 2\n```", "```drover\n{\"sim\": [\"succeeded\"]}\n```", tracker.Marker, "\n", "\t", "  ",
	"DRV-1", "<script>alert(1)</script>", "é", "🙂", "\xff\xfe",
}

func (h hostile) text() string {
	var b strings.Builder
	for range 1 + h.rng.IntN(8) {
		b.WriteString(hostileBits[h.rng.IntN(len(hostileBits))])
		if h.rng.IntN(3) == 0 {
			b.WriteString("words ")
		}
	}
	if h.rng.IntN(12) == 0 {
		b.WriteString(strings.Repeat("x", board.MaxBody+h.rng.IntN(1000)))
	}
	return b.String()
}

func (h hostile) labels() []string {
	var out []string
	for range h.rng.IntN(4) {
		out = append(out, h.pick(h.text(), strings.Repeat("l", 70), "has space", "a,b", "ok-label"))
	}
	return slices.DeleteFunc(out, func(l string) bool { return strings.TrimFunc(l, unicode.IsSpace) == "" })
}

func (h hostile) pick(xs ...string) string { return xs[h.rng.IntN(len(xs))] }

func lastOf(evs []board.Event, typ string) *board.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return &evs[i]
		}
	}
	return nil
}

func countOf(evs []board.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}
