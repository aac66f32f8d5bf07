package hostile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// The agent records what it received: its prompt (stdin) and argv, its
// working directory and its environment, per card identifier. Hooks record
// the environment they ran with. Nothing here interpolates card text.
const agentScript = `#!/bin/sh
out=%q
id="$DROVER_CARD_IDENTIFIER"
cat > "$out/$id.prompt"
for a in "$@"; do printf '%%s\n' "$a"; done > "$out/$id.argv"
pwd > "$out/$id.pwd"
env > "$out/$id.env"
exit 0
`

const workflow = `---
workspace: {root: "ROOT"}
hooks:
  after_create: 'printf "%s" "$DROVER_CARD_IDENTIFIER" > "$DROVER_WORKSPACE/.after_create"'
  before_run: 'env > "$DROVER_WORKSPACE/.before_run.env"'
agents:
  default: script
  profiles:
    script: {kind: command, command: "SCRIPT", args: ["--card", "fixed-arg"]}
    other: {kind: command, command: "SCRIPT"}
policy:
  max_attempts: 2
  backoff: {base: 50ms, max: 100ms, jitter: 0}
dispatch: {node: hostile, lease: 5s, poll_interval: 100ms, max_concurrent: 4}
---
Card {{ card.identifier }}: {{ card.title }}
Labels: {{ card.labels | join: ", " }}
{{ card.body }}
Plan: {{ card.spec.plan | default: "none" }}
{% for kv in card.spec %}{% if forloop.index <= 3 %}{{ kv[0] }};{% endif %}{% endfor %}
{% for a in card.spec.items %}{% for b in card.spec.items %}{% endfor %}{% endfor %}
`

// hostileCase is one card and what must become of it.
type hostileCase struct {
	name   string
	in     operator.Input
	refuse string // "" = accepted and run; else the field the InputError names
	// literal is text the prompt must contain verbatim ("" = the title).
	literal []string
	// blocked: the card must end blocked, with this in its reason.
	blocked string
}

func str(s string) *string { return &s }

func raw(s string) *json.RawMessage { r := json.RawMessage(s); return &r }

func nested(n int) string {
	return strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n)
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"plan":"many keys"`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `,"k%05d":%d`, i, i)
	}
	b.WriteString("}")
	return b.String()
}

func cases(canary string) []hostileCase {
	mib := strings.Repeat("0123456789abcde\n", (1<<20)/16) // exactly 1 MiB
	return []hostileCase{
		{name: "path traversal title", in: operator.Input{Title: str("../../etc/passwd")}},
		{name: "shell substitution", in: operator.Input{Title: str("$(touch " + canary + ")"), Body: str("$(touch " + canary + ")\n`touch " + canary + "`\n${IFS}; touch " + canary + " #")},
			literal: []string{"$(touch " + canary + ")", "`touch " + canary + "`", "; touch " + canary + " #"}},
		{name: "backticks", in: operator.Input{Title: str("`touch " + canary + "`"), Labels: &[]string{"`id`", "$(id)"}},
			literal: []string{"`id`, $(id)"}},
		{name: "liquid in title and body", in: operator.Input{Title: str("{{ card.spec.x }} {% include 'secrets' %}"),
			Body: str("{% for i in (1..1000000000) %}loop{% endfor %}{{ card.spec }}{% raw %}")},
			literal: []string{"{% for i in (1..1000000000) %}loop{% endfor %}{{ card.spec }}{% raw %}"}},
		{name: "liquid in spec", in: operator.Input{Title: str("spec injection"), Spec: raw(`{"plan":"{{ card.body }} {% include 'x' %} $(touch ` + canary + `)"}`)},
			literal: []string{"Plan: {{ card.body }} {% include 'x' %} $(touch " + canary + ")"}},
		{name: "1 MiB body", in: operator.Input{Title: str("big body"), Body: str(mib)}, literal: []string{mib}},
		{name: "body over 1 MiB", in: operator.Input{Title: str("too big"), Body: str(mib + "x")}, refuse: "body"},
		{name: "invalid UTF-8 title", in: operator.Input{Title: str("bad \xff\xfe title")}, refuse: "title"},
		{name: "invalid UTF-8 body", in: operator.Input{Title: str("t"), Body: str("bad \xc3\x28")}, refuse: "body"},
		{name: "invalid UTF-8 spec", in: operator.Input{Title: str("t"), Spec: raw("{\"plan\":\"\xff\"}")}, refuse: "spec"},
		{name: "deeply nested spec", in: operator.Input{Title: str("deep"), Spec: raw(nested(1000))}, refuse: "spec"},
		{name: "spec at the nesting limit", in: operator.Input{Title: str("deep but fine"), Spec: raw(nested(board.MaxSpecNest))}},
		{name: "spec not an object", in: operator.Input{Title: str("t"), Spec: raw(`["$(touch ` + canary + `)"]`)}, refuse: "spec"},
		{name: "NUL in title", in: operator.Input{Title: str("nul\x00title")}, refuse: "title"},
		{name: "NUL in body", in: operator.Input{Title: str("t"), Body: str("nul\x00body")}, refuse: "body"},
		{name: "NUL escaped in spec", in: operator.Input{Title: str("nul in spec"), Spec: raw(`{"plan":"a\u0000b"}`)}, literal: []string{"Plan: a\x00b"}},
		{name: "RTL and unicode", in: operator.Input{Title: str("مرحبا evil עברית 🚀 ﷽"), Body: str("Z̴̡͝a̷l̸g̵o\u200b\ufeff \u202eevil\u202c")},
			literal: []string{"Z̴̡͝a̷l̸g̵o\u200b\ufeff \u202eevil\u202c"}},
		{name: "right-to-left override in title", in: operator.Input{Title: str("invoice \u202egnp.exe")}, refuse: "title"},
		{name: "spec with 10000 keys", in: operator.Input{Title: str("many keys"), Spec: raw(manyKeys(10000))}, literal: []string{"Plan: many keys"}},
		{name: "hostile labels", in: operator.Input{Title: str("t"), Labels: &[]string{"a b"}}, refuse: "labels"},
		{name: "hostile agent name", in: operator.Input{Title: str("t"), Agent: str("../../bin/sh")}, refuse: "agent"},
		{name: "agent shell", in: operator.Input{Title: str("t"), Agent: str("$(touch " + canary + ")")}, refuse: "agent"},
		{name: "unknown agent", in: operator.Input{Title: str("t"), Agent: str("nope")}, refuse: "agent"},
		{name: "huge priority", in: operator.Input{Title: str("t"), Priority: func() *int { p := 1 << 40; return &p }()}, refuse: "priority"},
		{name: "title with newline", in: operator.Input{Title: str("line\n; touch " + canary)}, refuse: "title"},
		{name: "format verbs", in: operator.Input{Title: str("%s %n %x %!(EXTRA) %%"), Body: str("%v\x1b[31m")}, refuse: "body"},
		{name: "card data drives a nested loop", in: operator.Input{Title: str("loop bomb"), Spec: raw(`{"items":[` + strings.Repeat("0,", 999) + `0]}`)},
			blocked: "loops ran more than"},
		{name: "format verbs ok", in: operator.Input{Title: str("%s %n %x %!(EXTRA) %%"), Agent: str("other")}},
	}
}

func TestHostileCards(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agents")
	}
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	root := filepath.Join(dir, "workspaces")
	canary := filepath.Join(dir, "CANARY")
	for _, d := range []string{out, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(agentScript, out)), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(strings.NewReplacer("ROOT", root, "SCRIPT", script).Replace(workflow)), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := testkit.Store(t, testkit.SQLite)
	ops := &operator.Service{Store: st, Board: cfg.Board, Agents: []string{"script", "other"}}

	type added struct {
		hostileCase
		card board.Card
	}
	var run []added
	for _, c := range cases(canary) {
		card, err := ops.Add(ctx, c.in)
		if c.refuse != "" {
			var ie *board.InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(ie.Field, c.refuse) || ie.Msg == "" {
				t.Errorf("%s: want an input error naming %q, got %v", c.name, c.refuse, err)
			} else if !utf8.ValidString(err.Error()) {
				t.Errorf("%s: error message is not valid UTF-8: %q", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
			continue
		}
		if card.Title != *c.in.Title {
			t.Errorf("%s: stored title %q, want %q", c.name, card.Title, *c.in.Title)
		}
		run = append(run, added{c, card})
	}
	// Edits are validated like adds.
	if len(run) > 0 {
		if _, err := ops.Edit(ctx, run[0].card.Identifier, operator.Input{Spec: raw(nested(500))}); err == nil {
			t.Error("edit to a deeply nested spec accepted")
		}
		if _, err := ops.Edit(ctx, run[0].card.Identifier, operator.Input{Title: str("\xff")}); err == nil {
			t.Error("edit to an invalid UTF-8 title accepted")
		}
	}

	d, err := dispatch.New(dispatch.Options{Store: st, Config: cfg, LogDir: filepath.Join(dir, "logs")})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(rctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(60 * time.Second)
	for _, a := range run {
		var c board.Card
		for {
			c, err = st.GetCard(ctx, a.card.ID)
			if err == nil && settled(c) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (%s): not settled: %+v (%v)", a.name, a.card.Identifier, c, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if a.blocked != "" {
			if c.State != "blocked" || c.BlockReason == nil || !strings.Contains(c.BlockReason.What+c.BlockReason.Where, a.blocked) {
				t.Errorf("%s: want blocked with %q, got %s %+v", a.name, a.blocked, c.State, c.BlockReason)
			}
		} else if c.State != "review" {
			t.Errorf("%s: ended in %s (%+v), want review", a.name, c.State, c.BlockReason)
		}
		checkCard(t, st, a.name, c, out, root, a.literal)
	}
	cancel()
	<-done
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the canary exists: card text ran as shell")
	}
	// Nothing escaped the workspace root.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch e.Name() {
		case "out", "workspaces", "logs", "agent.sh", "d.db", "d.db-wal", "d.db-shm", "d.db.migrate.lock":
		default:
			t.Errorf("unexpected file %s beside the workspace root", e.Name())
		}
	}
}

// settled: the card is out of the dispatcher's hands for now (succeeded to
// review, or blocked), with no claim.
func settled(c board.Card) bool {
	return c.Claim == nil && (c.State == "review" || c.State == "done" || c.State == "blocked")
}

func checkCard(t *testing.T, st store.Store, name string, c board.Card, out, root string, literal []string) {
	t.Helper()
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if c.State == "blocked" {
		// A block must say what, where and how.
		if c.BlockReason == nil || c.BlockReason.What == "" || c.BlockReason.How == "" {
			t.Errorf("%s: blocked without a clear reason: %+v", name, c.BlockReason)
		}
		t.Logf("%s: blocked: %+v", name, c.BlockReason)
		return
	}
	if len(runs) == 0 {
		t.Errorf("%s: in %s with no run", name, c.State)
		return
	}
	for _, r := range runs {
		if r.Outcome == "" {
			t.Errorf("%s: run %s has no outcome", name, r.ID)
		}
		if r.Workspace != "" {
			rel, err := filepath.Rel(root, r.Workspace)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.Contains(rel, string(filepath.Separator)) {
				t.Errorf("%s: workspace %q is not a direct child of %q", name, r.Workspace, root)
			}
		}
	}
	id := c.Identifier
	prompt, err := os.ReadFile(filepath.Join(out, id+".prompt"))
	if err != nil {
		t.Errorf("%s: the agent did not record its prompt: %v", name, err)
		return
	}
	want := append([]string{c.Title}, literal...)
	for _, w := range want {
		if !strings.Contains(string(prompt), w) {
			t.Errorf("%s: the prompt does not contain %q literally (prompt starts %q)", name, trunc(w), trunc(string(prompt)))
		}
	}
	argv, _ := os.ReadFile(filepath.Join(out, id+".argv"))
	if a := string(argv); a != "" && a != "--card\nfixed-arg\n" {
		t.Errorf("%s: agent argv is %q; card text must not reach the arguments", name, a)
	}
	pwd, _ := os.ReadFile(filepath.Join(out, id+".pwd"))
	if ws := strings.TrimSpace(string(pwd)); filepath.Dir(ws) != root {
		t.Errorf("%s: agent ran in %q, not a workspace under %q", name, ws, root)
	} else {
		// Hooks ran in the workspace with card identity from the environment only.
		ac, err := os.ReadFile(filepath.Join(ws, ".after_create"))
		if err != nil || string(ac) != id {
			t.Errorf("%s: after_create hook wrote %q (%v), want %q", name, ac, err, id)
		}
		env, err := os.ReadFile(filepath.Join(ws, ".before_run.env"))
		if err != nil {
			t.Errorf("%s: before_run hook did not run: %v", name, err)
		} else if c.Title != "" && strings.Contains(string(env), c.Title) && len(c.Title) > 3 {
			t.Errorf("%s: the card title reached the hook's environment", name)
		}
	}
	agentEnv, _ := os.ReadFile(filepath.Join(out, id+".env"))
	if len(c.Title) > 3 && strings.Contains(string(agentEnv), c.Title) {
		t.Errorf("%s: the card title reached the agent's environment", name)
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
