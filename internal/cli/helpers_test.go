package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// env is one drover installation: a directory with a WORKFLOW.md and a store.
type env struct {
	t   *testing.T
	dir string
	cfg string
	dsn string
}

// newEnv runs drover init in a fresh directory; dsn "" means the default
// SQLite file beside the WORKFLOW.md.
func newEnv(t *testing.T, dsn string) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	e := &env{t: t, dir: dir, cfg: filepath.Join(dir, "WORKFLOW.md"), dsn: dsn}
	if e.dsn == "" {
		e.dsn = "sqlite:" + filepath.Join(dir, ".drover", "drover.db")
	}
	code, out, errs := e.run("init", dir)
	if code != 0 {
		t.Fatalf("drover init: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "wrote "+e.cfg) || !strings.Contains(out, "store ready") {
		t.Fatalf("drover init output:\n%s", out)
	}
	if _, err := os.Stat(e.cfg); err != nil {
		t.Fatalf("init wrote no WORKFLOW.md: %v", err)
	}
	return e
}

// run calls the CLI in-process with --config and --store set.
func (e *env) run(args ...string) (code int, stdout, stderr string) {
	var o, er bytes.Buffer
	full := append([]string{"--config", e.cfg, "--store", e.dsn}, args...)
	code = Main(full, &o, &er)
	return code, o.String(), er.String()
}

// ok runs a command that must succeed and returns its stdout.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != 0 {
		e.t.Fatalf("drover %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	if errs != "" {
		e.t.Fatalf("drover %s: unexpected stderr %q", strings.Join(args, " "), errs)
	}
	return out
}

// okJSON runs a command with --json and decodes its stdout into v.
func (e *env) okJSON(v any, args ...string) {
	e.t.Helper()
	out := e.ok(append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("drover --json %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// fails runs a command that must fail with exit code want.
func (e *env) fails(want int, args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != want {
		e.t.Fatalf("drover %s: exit %d, want %d (stdout %q stderr %q)", strings.Join(args, " "), code, want, out, errs)
	}
	return errs
}

// snapshot is the meaning of a store: every card, comment, event and run.
func snapshot(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	st := testkit.Open(t, dsn)
	defer st.Close() // now, not when t ends: the CLI under test opens the store next
	cards, err := st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(cards, func(i, j int) bool { return cards[i].ID < cards[j].ID })
	evs, err := st.ListEvents(ctx, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range cards {
		j, _ := json.Marshal(c)
		b.Write(j)
		b.WriteByte('\n')
		cms, err := st.ListComments(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "comments %d\n", len(cms))
	}
	fmt.Fprintf(&b, "events %d runs %d\n", len(evs), len(runs))
	states, _ := st.ListAgentStates(ctx)
	fmt.Fprintf(&b, "agent states %d\n", len(states))
	return b.String()
}

// keys returns the sorted keys of a JSON object.
func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// hasKeys fails unless obj has every key in want.
func hasKeys(t *testing.T, what string, obj map[string]json.RawMessage, want string) {
	t.Helper()
	for _, k := range strings.Fields(want) {
		if _, ok := obj[k]; !ok {
			t.Errorf("%s JSON lacks %q (has %v)", what, k, keys(obj))
		}
	}
}

const (
	cardFields  = "id identifier title body state state_reason priority labels agent spec blocked_by block_reason gave_up next_attempt_at retry_epoch claim created_at updated_at pull_request"
	runFields   = "id card_id attempt retry_epoch node agent outcome kind counted exit_code error started_at finished_at tokens_in tokens_out cost_usd log_path argv env_names"
	eventFields = "seq at card_id run_id type actor reason data"
)
