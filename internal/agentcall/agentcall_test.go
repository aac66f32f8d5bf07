package agentcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// live claims a fresh card on st and returns the service for its run.
func live(t *testing.T, st store.Store) (*Service, board.Card, board.Run) {
	t.Helper()
	ctx := context.Background()
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "t", State: "ready", Spec: json.RawMessage(`{"k":1}`)}, "operator")
	if err != nil {
		t.Fatal(err)
	}
	c, r := testkit.Claim(t, st, c, "n1", "claude")
	return &Service{Store: st, RunID: r.ID}, c, r
}

// Bad arguments are refused before anything is read or written, naming
// the argument and the fix.
func TestArgumentsAreChecked(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	s, c, _ := live(t, st)
	ctx := context.Background()
	long := strings.Repeat("x", MaxWhat+1)
	cases := []struct {
		name string
		call func() error
		arg  string
		msg  string
	}{
		{"empty what", func() error { _, err := s.Block(ctx, "  ", "w", "h"); return err }, "what", "is empty"},
		{"what too long", func() error { _, err := s.Block(ctx, long, "w", "h"); return err }, "what", "the limit is 2000"},
		{"bad UTF-8", func() error { _, err := s.Block(ctx, "a\xffb", "w", "h"); return err }, "what", "not valid UTF-8"},
		{"escape in where", func() error { _, err := s.Block(ctx, "w", "a\x1b[31mred", "h"); return err }, "where", "control character (U+001B)"},
		{"bidi override in how", func() error { _, err := s.Block(ctx, "w", "w", "fix \u202Eexe.png"); return err }, "how", "invisible formatting character"},
		{"too many options", func() error { _, err := s.Ask(ctx, "q?", make([]string, MaxOptions+1)); return err }, "options", "the limit is 10"},
		{"option with a line break", func() error { _, err := s.Ask(ctx, "q?", []string{"a\nb"}); return err }, "options[0]", "line breaks are not allowed"},
		{"empty comment", func() error { _, err := s.Comment(ctx, ""); return err }, "text", "is empty"},
		{"progress on two lines", func() error { _, err := s.Progress(ctx, "one\ntwo"); return err }, "note", "line breaks"},
		{"empty summary", func() error { _, err := s.Done(ctx, "\n"); return err }, "summary", "is empty"},
	}
	for _, tc := range cases {
		err := tc.call()
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.arg || !strings.Contains(ie.Msg, tc.msg) {
			t.Errorf("%s: err = %v, want an InputError on %s saying %q", tc.name, err, tc.arg, tc.msg)
		}
	}
	// A comment too long is not sent back to drover_comment for its details.
	_, err := s.Comment(ctx, strings.Repeat("y", MaxComment+1))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "text" || !strings.Contains(ie.Msg, "the limit is 8000") || strings.Contains(ie.Msg, "drover_comment") {
		t.Errorf("long comment: err = %v, want the limit without pointing back at drover_comment", err)
	}
	if _, err := s.Block(ctx, long, "w", "h"); err == nil || !strings.Contains(err.Error(), "details can go in drover_comment") {
		t.Errorf("long what: err = %v, want it to point at drover_comment for the details", err)
	}
	evs, _ := st.ListEvents(ctx, store.EventFilter{CardID: c.ID})
	cs, _ := st.ListComments(ctx, c.ID)
	if len(evs) != 1 || len(cs) != 0 { // the created event only
		t.Fatalf("refused calls wrote %d events and %d comments", len(evs)-1, len(cs))
	}
}

// A multi-line what keeps its lines and tabs; surrounding space goes.
func TestReportKeptVerbatim(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	s, _, r := live(t, st)
	ctx := context.Background()
	rep, err := s.Block(ctx, "  the API\n\tnames /v2/pay  ", "spec.endpoint", "pick one of api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetRun(ctx, r.ID)
	if got.Report == nil || got.Report.What != "the API\n\tnames /v2/pay" || rep.What != got.Report.What {
		t.Fatalf("stored %+v", got.Report)
	}
	if _, err := s.Ask(ctx, "and now?", nil); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "reported already (block)") {
		t.Fatalf("a second report: %v, want refused: reported already", err)
	}
	card, err := s.ReadCard(ctx)
	if err != nil || card.Run.ID != r.ID || string(card.Spec) != `{"k":1}` {
		t.Fatalf("ReadCard = %+v, %v", card, err)
	}
}

// Calls from a run whose claim moved on, or that has ended, are refused
// with the reason and write nothing.
func TestFencedCallsAreRefused(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	ctx := context.Background()
	s, c, r := live(t, st)
	c, _ = st.GetCard(ctx, c.ID)
	taken := c
	taken.Claim = &board.Claim{Owner: "n2", Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	if err := st.Apply(ctx, store.Change{Card: &taken}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Comment(ctx, "hello"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no longer holds") {
		t.Fatalf("comment under a taken-over claim: %v", err)
	}
	ended := r
	ended.Outcome = board.OutcomeLeaseLost
	if err := st.Apply(ctx, store.Change{Run: &ended, RunMustBeOpen: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block(ctx, "w", "w", "h"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "has ended (lease_lost)") {
		t.Fatalf("block after the run ended: %v", err)
	}
	if _, err := s.ReadCard(ctx); !errors.Is(err, ErrRefused) {
		t.Fatalf("drover_card after the end: %v", err)
	}
	cs, _ := st.ListComments(ctx, c.ID)
	got, _ := st.GetRun(ctx, r.ID)
	if len(cs) != 0 || got.Report != nil {
		t.Fatalf("refused calls wrote: comments %+v, report %+v", cs, got.Report)
	}
	if _, err := (&Service{Store: st}).Comment(ctx, "x"); err == nil || !strings.Contains(err.Error(), "DROVER_RUN_ID") {
		t.Fatalf("no run id: %v", err)
	}
}

// A chatty agent is capped: past limits.agent_comments_per_run (or
// _per_card, or the progress caps) a call is refused with a tool error
// naming the key, and nothing is written.
func TestAgentWritesAreCapped(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	s, c, _ := live(t, st)
	s.Limits = &Limits{CommentsPerRun: 2, CommentsPerCard: -1, ProgressPerRun: 3, ProgressPerCard: -1}
	ctx := context.Background()
	for i := range 2 {
		if _, err := s.Comment(ctx, fmt.Sprint("finding ", i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Comment(ctx, "one more")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "limits.agent_comments_per_run") || !strings.Contains(err.Error(), "the limit is 2") {
		t.Fatalf("third comment: err = %v, want a refusal naming limits.agent_comments_per_run", err)
	}
	for i := range 3 {
		if _, err := s.Progress(ctx, fmt.Sprint("step ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Progress(ctx, "step 4"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "limits.agent_progress_per_run") {
		t.Fatalf("fourth note: err = %v, want a refusal naming limits.agent_progress_per_run", err)
	}
	s.Limits.CommentsPerRun, s.Limits.CommentsPerCard = -1, 2
	if _, err := s.Comment(ctx, "card full"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "limits.agent_comments_per_card") {
		t.Fatalf("comment past the card's cap: err = %v, want a refusal naming limits.agent_comments_per_card", err)
	}
	cs, _ := st.ListComments(ctx, c.ID)
	if len(cs) != 2 {
		t.Fatalf("%d comments stored, want the 2 the caps allow", len(cs))
	}
	// The report is still taken: it is one per run, within its own limits.
	if _, err := s.Done(ctx, "finished"); err != nil {
		t.Fatalf("done after the caps: %v", err)
	}
}
