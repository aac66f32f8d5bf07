package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

type cardJSON struct {
	ID          string             `json:"id"`
	Identifier  string             `json:"identifier"`
	Title       string             `json:"title"`
	Body        string             `json:"body"`
	State       string             `json:"state"`
	StateReason string             `json:"state_reason"`
	Priority    int                `json:"priority"`
	Labels      []string           `json:"labels"`
	Agent       string             `json:"agent"`
	Spec        json.RawMessage    `json:"spec"`
	BlockedBy   []string           `json:"blocked_by"`
	BlockReason *board.BlockReason `json:"block_reason"`
	GaveUp      *board.GaveUp      `json:"gave_up"`
	RetryEpoch  int                `json:"retry_epoch"`
}

func TestCardCommandsSQLite(t *testing.T) { cardScenario(t, newEnv(t, "")) }

func TestCardCommandsPostgres(t *testing.T) {
	cardScenario(t, newEnv(t, testkit.DSN(t, testkit.Postgres)))
}

// cardScenario is drover init followed by every card command, as documented.
func cardScenario(t *testing.T, e *env) {
	ctx := context.Background()

	// add, with --json: the card's fields as INTERFACES.md lists them.
	var raw map[string]json.RawMessage
	e.okJSON(&raw, "card", "add", "--title", "First card", "--label", "bug", "--priority", "2")
	hasKeys(t, "card add", raw, cardFields)
	var c1 cardJSON
	e.okJSON(&c1, "card", "show", "DRV-1")
	if c1.Identifier != "DRV-1" || c1.State != "ready" || c1.Priority != 2 || strings.Join(c1.Labels, ",") != "bug" || c1.RetryEpoch != 1 || string(c1.Spec) != "{}" {
		t.Fatalf("DRV-1 = %+v", c1)
	}

	body := filepath.Join(e.dir, "body.md")
	spec := filepath.Join(e.dir, "spec.json")
	os.WriteFile(body, []byte("# Plan\n\n- step one\n"), 0o644)
	os.WriteFile(spec, []byte(`{"sim": ["succeeded"], "plan": "docs/plan.md"}`), 0o644)
	out := e.ok("card", "add", "--title", "Second", "--body-file", body, "--spec-file", spec, "--agent", "sim", "--state", "backlog", "--blocked-by", "DRV-1")
	if !strings.Contains(out, "DRV-2  Second  [backlog]") {
		t.Fatalf("card add text output %q", out)
	}
	e.ok("card", "add", "--title", "Third", "--spec", `{"sim":["succeeded"]}`, "--priority", "1")

	// ls: board order (priority, then age), filters.
	var cards []cardJSON
	e.okJSON(&cards, "card", "ls")
	if got := idents(cards); got != "DRV-3 DRV-1 DRV-2" {
		t.Fatalf("card ls order = %s, want DRV-3 DRV-1 DRV-2", got)
	}
	var lsRaw []map[string]json.RawMessage
	e.okJSON(&lsRaw, "card", "ls")
	hasKeys(t, "card ls[0]", lsRaw[0], cardFields)
	e.okJSON(&cards, "card", "ls", "--state", "backlog")
	if got := idents(cards); got != "DRV-2" {
		t.Fatalf("ls --state backlog = %s", got)
	}
	e.okJSON(&cards, "card", "ls", "--label", "bug")
	if got := idents(cards); got != "DRV-1" {
		t.Fatalf("ls --label bug = %s", got)
	}
	e.okJSON(&cards, "card", "ls", "--agent", "sim")
	if got := idents(cards); got != "DRV-2" {
		t.Fatalf("ls --agent sim = %s", got)
	}
	if out := e.ok("card", "ls"); !strings.Contains(out, "DRV-2") || !strings.Contains(out, "STATE") {
		t.Fatalf("card ls text:\n%s", out)
	}

	// show: by identifier (any case) or id; --json adds runs and events.
	var show map[string]json.RawMessage
	e.okJSON(&show, "card", "show", "drv-2")
	hasKeys(t, "card show", show, cardFields+" runs events")
	var c2 cardJSON
	json.Unmarshal(mustMarshal(show), &c2)
	if c2.Body != "# Plan\n\n- step one\n" || c2.Agent != "sim" || len(c2.BlockedBy) != 1 || c2.BlockedBy[0] != c1.ID || string(c2.Spec) != `{"sim":["succeeded"],"plan":"docs/plan.md"}` {
		t.Fatalf("DRV-2 = %+v", c2)
	}
	var showEvents []map[string]json.RawMessage
	json.Unmarshal(show["events"], &showEvents)
	if len(showEvents) != 1 {
		t.Fatalf("card show events = %d, want the created event", len(showEvents))
	}
	hasKeys(t, "card show events[0]", showEvents[0], eventFields)
	if out := e.ok("card", "show", c2.ID); !strings.Contains(out, "DRV-2  Second") || !strings.Contains(out, "waits on") || !strings.Contains(out, "step one") {
		t.Fatalf("card show text:\n%s", out)
	}

	// edit: a changed spec opens a new retry epoch.
	var c3 cardJSON
	e.okJSON(&c3, "card", "edit", "DRV-3", "--spec", `{"sim":["network","succeeded"]}`, "--title", "Third, edited")
	if c3.RetryEpoch != 2 || c3.Title != "Third, edited" || c3.Priority != 1 {
		t.Fatalf("edited DRV-3 = %+v", c3)
	}

	// mv with a reason.
	if out := e.ok("card", "mv", "DRV-2", "ready", "--reason", "planned"); !strings.Contains(out, "[ready]") {
		t.Fatalf("card mv: %q", out)
	}
	e.okJSON(&c2, "card", "show", "DRV-2")
	if c2.State != "ready" || c2.StateReason != "planned" {
		t.Fatalf("after mv: %+v", c2)
	}

	// comment.
	var cm board.Comment
	e.okJSON(&cm, "card", "comment", "DRV-1", "looks good")
	if cm.ID == "" || cm.CardID != c1.ID || cm.Body != "looks good" {
		t.Fatalf("comment = %+v", cm)
	}
	if out := e.ok("card", "comment", "DRV-1", "second note"); !strings.Contains(out, "commented on DRV-1") {
		t.Fatalf("comment text: %q", out)
	}

	// block; a plain mv out of blocked is refused; resume opens a new epoch.
	e.okJSON(&c1, "card", "block", "DRV-1", "--reason", "needs credentials")
	if c1.State != "blocked" || c1.BlockReason == nil || c1.BlockReason.What != "needs credentials" {
		t.Fatalf("blocked DRV-1 = %+v", c1)
	}
	if msg := e.fails(1, "card", "mv", "DRV-1", "ready"); !strings.Contains(msg, "drover card resume DRV-1") {
		t.Fatalf("mv out of blocked: %q", msg)
	}
	e.okJSON(&c1, "card", "resume", "DRV-1")
	if c1.State != "ready" || c1.RetryEpoch != 2 || c1.BlockReason != nil {
		t.Fatalf("resumed DRV-1 = %+v", c1)
	}

	// done → mv refused → reopen.
	e.ok("card", "mv", "DRV-3", "done", "--reason", "merged")
	if msg := e.fails(1, "card", "mv", "DRV-3", "ready"); !strings.Contains(msg, "drover card reopen DRV-3") {
		t.Fatalf("mv out of done: %q", msg)
	}
	e.okJSON(&c3, "card", "reopen", "DRV-3")
	if c3.State != "ready" || c3.RetryEpoch != 3 {
		t.Fatalf("reopened DRV-3 = %+v", c3)
	}

	// cancel → mv refused.
	e.okJSON(&c2, "card", "cancel", "DRV-2", "--reason", "duplicate")
	if c2.State != "cancelled" || c2.StateReason != "duplicate" {
		t.Fatalf("cancelled DRV-2 = %+v", c2)
	}
	if msg := e.fails(1, "card", "mv", "DRV-2", "backlog"); !strings.Contains(msg, "resume DRV-2") {
		t.Fatalf("mv out of cancelled: %q", msg)
	}

	// answer: only for a parked card.
	e.fails(1, "card", "answer", "DRV-1", "use postgres")
	e.ok("card", "mv", "DRV-1", "awaiting_input", "--reason", "agent asked which database")
	e.okJSON(&c1, "card", "answer", "DRV-1", "use postgres")
	if c1.State != "ready" {
		t.Fatalf("answered DRV-1 = %+v", c1)
	}

	// board show: columns, roles, counts.
	var bs struct {
		Prefix  string `json:"prefix"`
		Columns []struct {
			Name  string `json:"name"`
			Role  string `json:"role"`
			Count int    `json:"count"`
			Sink  bool   `json:"sink"`
		} `json:"columns"`
	}
	e.okJSON(&bs, "board", "show")
	counts := map[string]int{}
	for _, c := range bs.Columns {
		counts[c.Name] = c.Count
		if c.Sink != (c.Role == "done" || c.Role == "blocked" || c.Role == "cancelled") {
			t.Errorf("column %s sink=%v role %s", c.Name, c.Sink, c.Role)
		}
	}
	if bs.Prefix != "DRV" || len(bs.Columns) != 8 || counts["ready"] != 2 || counts["cancelled"] != 1 {
		t.Fatalf("board show = %+v", bs)
	}
	if out := e.ok("board", "show"); !strings.Contains(out, "sink: only an operator") {
		t.Fatalf("board show text:\n%s", out)
	}

	// events: every transition, with actors; --card, --since (cursor and time).
	var evs []map[string]json.RawMessage
	e.okJSON(&evs, "events")
	if len(evs) != 14 {
		t.Fatalf("events: %d, want 14 (every transition recorded)", len(evs))
	}
	for _, ev := range evs {
		hasKeys(t, "event", ev, eventFields)
	}
	var typed []board.Event
	e.okJSON(&typed, "events", "--card", "DRV-1")
	var types []string
	for _, ev := range typed {
		if ev.CardID != c1.ID || !strings.HasPrefix(ev.Actor, "operator") {
			t.Errorf("event %+v: want card %s by an operator", ev, c1.ID)
		}
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); got != "created commented commented blocked resumed moved answered" {
		t.Fatalf("DRV-1 events = %s", got)
	}
	var all []board.Event
	e.okJSON(&all, "events")
	cursor := all[len(all)-4].Seq
	var since []board.Event
	e.okJSON(&since, "events", "--since", fmt.Sprint(cursor))
	if len(since) != 3 || since[0].Seq <= cursor {
		t.Fatalf("events --since %d: %d events", cursor, len(since))
	}
	e.okJSON(&since, "events", "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if len(since) != 0 {
		t.Fatalf("events since the future: %d", len(since))
	}
	e.okJSON(&since, "events", "--since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	if len(since) != len(all) {
		t.Fatalf("events since an hour ago: %d of %d", len(since), len(all))
	}
	if out := e.ok("events", "--card", "DRV-3"); !strings.Contains(out, "reopened") || !strings.Contains(out, "DRV-3") {
		t.Fatalf("events text:\n%s", out)
	}

	// runs and logs: the dispatcher writes runs; put one in the store as it would.
	logPath := filepath.Join(e.dir, "run.log")
	os.WriteFile(logPath, []byte("agent output line 1\nline 2\n"), 0o644)
	st := testkit.Open(t, e.dsn)
	start := time.Now().Add(-time.Minute).UTC()
	end := start.Add(30 * time.Second)
	exit := 0
	run := &board.Run{CardID: c3.ID, Attempt: 1, RetryEpoch: c3.RetryEpoch, Node: "node-a", Agent: "sim", Outcome: board.OutcomeSucceeded,
		Counted: true, ExitCode: &exit, ClaimedAt: start, StartedAt: &start, FinishedAt: &end, TokensIn: 10, TokensOut: 20, CostUSD: 0.01, LogPath: logPath,
		Argv: []string{"claude", "-p", "--api-key", "[redacted]"}, EnvNames: []string{"ANTHROPIC_API_KEY", "PATH"}}
	if err := st.Apply(ctx, store.Change{NewRun: run}); err != nil {
		t.Fatal(err)
	}
	st.Close() // now, not when t ends: a fresh CLI invocation reads what it wrote
	var runs []map[string]json.RawMessage
	e.okJSON(&runs, "runs")
	if len(runs) != 1 {
		t.Fatalf("runs: %d", len(runs))
	}
	hasKeys(t, "run", runs[0], runFields)
	var rs []board.Run
	e.okJSON(&rs, "runs", "DRV-3")
	if len(rs) != 1 || rs[0].ID != run.ID || rs[0].Outcome != board.OutcomeSucceeded {
		t.Fatalf("runs DRV-3 = %+v", rs)
	}
	if strings.Join(rs[0].Argv, " ") != "claude -p --api-key [redacted]" || strings.Join(rs[0].EnvNames, " ") != "ANTHROPIC_API_KEY PATH" {
		t.Errorf("runs DRV-3 --json: argv %q, env_names %q", rs[0].Argv, rs[0].EnvNames)
	}
	if out := e.ok("runs", "DRV-3"); !strings.Contains(out, run.ID+"  run: claude -p --api-key [redacted]; env: ANTHROPIC_API_KEY PATH") {
		t.Errorf("runs DRV-3 does not show the command line:\n%s", out)
	}
	e.okJSON(&rs, "runs", "DRV-1")
	if len(rs) != 0 {
		t.Fatalf("runs DRV-1 = %+v", rs)
	}
	if out := e.ok("runs"); !strings.Contains(out, "DRV-3") || !strings.Contains(out, "succeeded") {
		t.Fatalf("runs text:\n%s", out)
	}
	if out := e.ok("logs", run.ID); out != "agent output line 1\nline 2\n" {
		t.Fatalf("logs = %q", out)
	}
	// --json: one object per line (JSON lines).
	want := `{"run_id":"` + run.ID + `","n":1,"line":"agent output line 1"}` + "\n" + `{"run_id":"` + run.ID + `","n":2,"line":"line 2"}` + "\n"
	if out := e.ok("--json", "logs", run.ID); out != want {
		t.Fatalf("logs --json = %q, want %q", out, want)
	}
	e.okJSON(&show, "card", "show", "DRV-3")
	json.Unmarshal(show["runs"], &rs)
	if len(rs) != 1 {
		t.Fatalf("card show DRV-3 runs = %d", len(rs))
	}

	// Every Main call opened and closed the store: a fresh invocation (a
	// restart) sees everything.
	e.okJSON(&cards, "card", "ls")
	if len(cards) != 3 {
		t.Fatalf("after restart: %d cards", len(cards))
	}
	e.okJSON(&cards, "card", "ls", "--state", "ready")
	if got := idents(cards); got != "DRV-3 DRV-1" {
		t.Fatalf("ready after restart = %s", got)
	}
	// A new card continues the sequence.
	e.okJSON(&c1, "card", "add", "--title", "Fourth")
	if c1.Identifier != "DRV-4" {
		t.Fatalf("next identifier %s", c1.Identifier)
	}
}

func TestDataSurvivesRestart(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "persist me", "--label", "keep")
	e.ok("card", "block", "DRV-1", "--reason", "wait")
	// A second, independent invocation with only --config: the default store
	// beside the WORKFLOW.md holds the cards.
	var o, er bytes.Buffer
	if code := Main([]string{"--config", e.cfg, "--json", "card", "ls"}, &o, &er); code != 0 {
		t.Fatalf("exit %d: %s", code, er.String())
	}
	var cards []cardJSON
	if err := json.Unmarshal(o.Bytes(), &cards); err != nil {
		t.Fatal(err)
	}
	if len(cards) != 1 || cards[0].Title != "persist me" || cards[0].State != "blocked" || cards[0].BlockReason == nil {
		t.Fatalf("after restart: %+v", cards)
	}
	// DROVER_STORE is honoured when --store is absent.
	t.Setenv("DROVER_STORE", e.dsn)
	o.Reset()
	other := filepath.Join(t.TempDir(), "WORKFLOW.md")
	if code := Main([]string{"--config", other, "--json", "card", "show", "DRV-1"}, &o, &er); code != 0 {
		t.Fatalf("DROVER_STORE: exit %d: %s", code, er.String())
	}
}

func idents(cs []cardJSON) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Identifier)
	}
	return strings.Join(s, " ")
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
