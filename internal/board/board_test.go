package board

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckMove(t *testing.T) {
	b := Default()
	cases := []struct {
		name     string
		from, to string
		by       Mover
		ok       bool
		want     []string // substrings of the message
		input    bool     // an *InputError (field "state") rather than a *MoveError
	}{
		{name: "operator backlog to ready", from: "backlog", to: "ready", by: ByOperator, ok: true},
		{name: "operator ready to review", from: "ready", to: "review", by: ByOperator, ok: true},
		{name: "operator ready to done", from: "ready", to: "done", by: ByOperator, ok: true},
		{name: "operator ready to blocked", from: "ready", to: "blocked", by: ByOperator, ok: true},
		{name: "dispatcher ready to in_progress", from: "ready", to: "in_progress", by: ByDispatcher, ok: true},
		{name: "dispatcher in_progress to done", from: "in_progress", to: "done", by: ByDispatcher, ok: true},
		{name: "same state is a no-op", from: "done", to: "done", by: ByDispatcher, ok: true},

		{name: "dispatcher out of done", from: "done", to: "ready", by: ByDispatcher, want: []string{"DRV-1", "sink", "automation never"}},
		{name: "dispatcher out of blocked", from: "blocked", to: "ready", by: ByDispatcher, want: []string{"sink", "resume DRV-1"}},
		{name: "dispatcher out of cancelled", from: "cancelled", to: "in_progress", by: ByDispatcher, want: []string{"sink"}},
		{name: "dispatcher blocked to done", from: "blocked", to: "done", by: ByDispatcher, want: []string{"sink"}},

		{name: "operator plain move out of done", from: "done", to: "ready", by: ByOperator, want: []string{"sink", "drover card reopen DRV-1"}},
		{name: "operator plain move out of blocked", from: "blocked", to: "ready", by: ByOperator, want: []string{"sink", "drover card resume DRV-1"}},
		{name: "operator plain move out of cancelled", from: "cancelled", to: "backlog", by: ByOperator, want: []string{"sink", "drover card resume DRV-1"}},

		{name: "operator into running", from: "ready", to: "in_progress", by: ByOperator, want: []string{"only the dispatcher", "in_progress"}},
		{name: "operator backlog into running", from: "backlog", to: "in_progress", by: ByOperator, want: []string{"only the dispatcher"}},

		{name: "unknown target", from: "ready", to: "doing", by: ByOperator, input: true, want: []string{`"doing"`, "backlog, ready, in_progress"}},
		{name: "unknown target by dispatcher", from: "ready", to: "", by: ByDispatcher, input: true, want: []string{"unknown state"}},
		{name: "unknown source", from: "limbo", to: "ready", by: ByOperator, want: []string{`"limbo"`, "not on the board", "board.columns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMove(b, "DRV-1", tc.from, tc.to, tc.by)
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckMove(%s→%s) = %v, want nil", tc.from, tc.to, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckMove(%s→%s) = nil, want refusal", tc.from, tc.to)
			}
			if tc.input {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Field != "state" {
					t.Fatalf("err = %#v, want *InputError{Field: state}", err)
				}
			} else {
				var me *MoveError
				if !errors.As(err, &me) {
					t.Fatalf("err = %#v, want *MoveError", err)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
		})
	}
}

// No sink can be left by the dispatcher, whatever the target column.
func TestDispatcherNeverLeavesASink(t *testing.T) {
	b := Default()
	for _, from := range b.Columns {
		if !from.Role.IsSink() {
			continue
		}
		for _, to := range b.Columns {
			if to.Name == from.Name {
				continue
			}
			if err := CheckMove(b, "DRV-9", from.Name, to.Name, ByDispatcher); err == nil {
				t.Errorf("dispatcher moved %s → %s", from.Name, to.Name)
			}
			if err := CheckMove(b, "DRV-9", from.Name, to.Name, ByOperator); err == nil {
				t.Errorf("operator plain-moved %s → %s (must use resume/reopen)", from.Name, to.Name)
			}
		}
	}
}

func TestCheckResumeReopen(t *testing.T) {
	b := Default()
	resumeOK := map[string]bool{"blocked": true, "cancelled": true, "awaiting_input": true}
	reopenOK := map[string]bool{"done": true, "review": true, "cancelled": true, "blocked": true}
	for _, col := range append(b.Names(), "limbo") {
		err := CheckResume(b, "DRV-3", col)
		if resumeOK[col] != (err == nil) {
			t.Errorf("CheckResume(%s) = %v, want ok=%v", col, err, resumeOK[col])
		}
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), "DRV-3") {
				t.Errorf("CheckResume(%s) error %v: want *MoveError naming the card", col, err)
			}
		}
		err = CheckReopen(b, "DRV-3", col)
		if reopenOK[col] != (err == nil) {
			t.Errorf("CheckReopen(%s) = %v, want ok=%v", col, err, reopenOK[col])
		}
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), "DRV-3") {
				t.Errorf("CheckReopen(%s) error %v: want *MoveError naming the card", col, err)
			}
		}
	}
	if err := CheckResume(b, "DRV-3", "done"); err == nil || !strings.Contains(err.Error(), "reopen DRV-3") {
		t.Errorf("resume of a done card: %v, want a hint to reopen", err)
	}
}

func TestBoardValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("default board: %v", err)
	}
	mod := func(f func(b *Board)) Board {
		b := Default()
		b.Columns = append([]Column(nil), b.Columns...)
		f(&b)
		return b
	}
	cases := []struct {
		name string
		b    Board
		want string
	}{
		{"bad prefix", mod(func(b *Board) { b.Prefix = "drv" }), "board.prefix"},
		{"empty prefix", mod(func(b *Board) { b.Prefix = "" }), "board.prefix"},
		{"long prefix", mod(func(b *Board) { b.Prefix = "ABCDEFGHIJK" }), "board.prefix"},
		{"no columns", mod(func(b *Board) { b.Columns = nil }), "board.columns: empty"},
		{"bad name", mod(func(b *Board) { b.Columns[2].Name = "In Progress" }), "board.columns[2].name"},
		{"empty name", mod(func(b *Board) { b.Columns[0].Name = "" }), "board.columns[0].name"},
		{"duplicate name", mod(func(b *Board) { b.Columns[3].Name = "ready" }), "board.columns[3].name"},
		{"bad role", mod(func(b *Board) { b.Columns[4].Role = "review" }), "board.columns[4].role"},
		{"no eligible", mod(func(b *Board) { b.Columns[1].Role = RoleInactive }), `role "eligible"`},
		{"no running", mod(func(b *Board) { b.Columns[2].Role = RoleInactive }), `role "running"`},
		{"no blocked", mod(func(b *Board) { b.Columns[6].Role = RoleInactive }), `role "blocked"`},
		{"no done", mod(func(b *Board) { b.Columns[5].Role = RoleCompleted }), `role "done"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %s", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %q, want it to name %q", err, tc.want)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	for _, r := range Roles {
		if !r.Valid() {
			t.Errorf("%s not valid", r)
		}
	}
	if Role("sink").Valid() {
		t.Error("unknown role valid")
	}
	sinks := map[Role]bool{RoleBlocked: true, RoleDone: true, RoleCancelled: true}
	for _, r := range Roles {
		if r.IsSink() != sinks[r] {
			t.Errorf("%s.IsSink() = %v", r, r.IsSink())
		}
	}
	b := Default()
	if c, ok := b.First(RoleEligible); !ok || c.Name != "ready" {
		t.Errorf("First(eligible) = %v %v", c, ok)
	}
	if b.RoleOf("nope") != "" {
		t.Error("RoleOf unknown column should be empty")
	}
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v (%T), want *InputError{Field: %q}", err, err, field)
	}
	if ie.Field != field {
		t.Fatalf("Field = %q, want %q (%v)", ie.Field, field, err)
	}
	if !strings.HasPrefix(err.Error(), field+": ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("message %q should be one line starting with the field", err)
	}
}

func TestInputLimits(t *testing.T) {
	deep := strings.Repeat(`{"a":`, MaxSpecNest+1) + "1" + strings.Repeat("}", MaxSpecNest+1)
	atLimit := strings.Repeat(`{"a":`, MaxSpecNest) + "1" + strings.Repeat("}", MaxSpecNest)
	big := `{"x":"` + strings.Repeat("a", MaxSpec) + `"}`
	manyLabels := make([]string, MaxLabels+1)
	for i := range manyLabels {
		manyLabels[i] = "l" + strings.Repeat("x", i%5)
	}
	fiftyLabels := manyLabels[:MaxLabels]

	type check struct {
		name  string
		err   error
		field string // "" = valid
	}
	spec := func(s string) error { _, err := NormalizeSpec([]byte(s)); return err }
	cases := []check{
		{"title ok", ValidateTitle("Fix the login page"), ""},
		{"title 500 runes", ValidateTitle(strings.Repeat("é", MaxTitle)), ""},
		{"title 501 runes", ValidateTitle(strings.Repeat("a", MaxTitle+1)), "title"},
		{"title empty", ValidateTitle(""), "title"},
		{"title blank", ValidateTitle("  \t "), "title"},
		{"title newline", ValidateTitle("one\ntwo"), "title"},
		{"title escape", ValidateTitle("bell\x07"), "title"},
		{"title DEL", ValidateTitle("x\x7f"), "title"},
		{"title C1 control", ValidateTitle("x\u0085y"), "title"},
		{"title invalid utf8", ValidateTitle("bad \xff\xfe"), "title"},
		{"title right-to-left override", ValidateTitle("invoice\u202Egnp.exe"), "title"},
		{"title bidi isolate", ValidateTitle("a\u2067b\u2069"), "title"},
		{"title left-to-right mark", ValidateTitle("a\u200Eb"), "title"},
		{"title zero-width space", ValidateTitle("log\u200Bin"), "title"},
		{"title byte order mark", ValidateTitle("\uFEFFtitle"), "title"},
		{"title line separator", ValidateTitle("one\u2028two"), "title"},
		{"title Arabic ok", ValidateTitle("إصلاح صفحة الدخول"), ""},
		{"title emoji with joiner ok", ValidateTitle("Ship it \U0001F469\u200D\U0001F4BB"), ""},

		{"body ok", ValidateBody("# Heading\n\n- item\tTab\r\n"), ""},
		{"body empty ok", ValidateBody(""), ""},
		{"body 1 MiB", ValidateBody(strings.Repeat("a", MaxBody)), ""},
		{"body over 1 MiB", ValidateBody(strings.Repeat("a", MaxBody+1)), "body"},
		{"body invalid utf8", ValidateBody("ok \xc3\x28"), "body"},
		{"body control char", ValidateBody("nul\x00"), "body"},

		{"spec empty", spec(""), ""},
		{"spec object", spec(`{"plan": "x", "n": [1, 2]}`), ""},
		{"spec at nesting limit", spec(atLimit), ""},
		{"spec too deep", spec(deep), "spec"},
		{"spec too big", spec(big), "spec"},
		{"spec not json", spec(`{plan: x}`), "spec"},
		{"spec truncated", spec(`{"a": 1`), "spec"},
		{"spec array", spec(`[1, 2]`), "spec"},
		{"spec string", spec(`"x"`), "spec"},
		{"spec null", spec(`null`), "spec"},
		{"spec number", spec(`3`), "spec"},
		{"spec invalid utf8", spec("{\"a\": \"\xff\"}"), "spec"},
		{"spec brackets inside strings do not count", spec(`{"a": "` + strings.Repeat("[", 100) + `"}`), ""},

		{"labels 50", ValidateLabels(fiftyLabels), ""},
		{"labels 51", ValidateLabels(manyLabels), "labels"},
		{"label empty", ValidateLabels([]string{"ok", ""}), "labels[1]"},
		{"label space", ValidateLabels([]string{"needs review"}), "labels[0]"},
		{"label comma", ValidateLabels([]string{"a", "b,c"}), "labels[1]"},
		{"label control", ValidateLabels([]string{"a\x01"}), "labels[0]"},
		{"label too long", ValidateLabels([]string{strings.Repeat("x", MaxLabelLen+1)}), "labels[0]"},
		{"label invalid utf8", ValidateLabels([]string{"\xff"}), "labels[0]"},
		{"label right-to-left override", ValidateLabels([]string{"ok", "x\u202Ey"}), "labels[1]"},

		{"priority 0", ValidatePriority(0), ""},
		{"priority 4", ValidatePriority(4), ""},
		{"priority 5", ValidatePriority(5), "priority"},
		{"priority 9", ValidatePriority(9), "priority"},
		{"priority -1", ValidatePriority(-1), "priority"},

		{"agent empty", ValidateAgentName(""), ""},
		{"agent ok", ValidateAgentName("claude-2_x"), ""},
		{"agent upper", ValidateAgentName("Claude"), "agent"},
		{"agent path", ValidateAgentName("../bin/sh"), "agent"},
		{"agent space", ValidateAgentName("my agent"), "agent"},
		{"agent too long", ValidateAgentName(strings.Repeat("a", 41)), "agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.field == "" {
				if tc.err != nil {
					t.Fatalf("want valid, got %v", tc.err)
				}
				return
			}
			wantField(t, tc.err, tc.field)
		})
	}
}

func TestNormalizeSpecCompacts(t *testing.T) {
	got, err := NormalizeSpec([]byte("  {\n \"a\" : [1, 2] }\n"))
	if err != nil || string(got) != `{"a":[1,2]}` {
		t.Fatalf("NormalizeSpec = %s, %v", got, err)
	}
	got, err = NormalizeSpec([]byte("   "))
	if err != nil || string(got) != "{}" {
		t.Fatalf("empty spec = %s, %v", got, err)
	}
}

func TestValidateCard(t *testing.T) {
	b := Default()
	good := Card{Title: "t", State: "ready", Spec: json.RawMessage(`{}`)}
	if err := ValidateCard(b, good); err != nil {
		t.Fatalf("good card: %v", err)
	}
	cases := []struct {
		field string
		mod   func(c *Card)
	}{
		{"title", func(c *Card) { c.Title = "a\x1bb" }},
		{"body", func(c *Card) { c.Body = "\xff" }},
		{"priority", func(c *Card) { c.Priority = 9 }},
		{"labels[0]", func(c *Card) { c.Labels = []string{"a b"} }},
		{"agent", func(c *Card) { c.Agent = "A!" }},
		{"state", func(c *Card) { c.State = "doing" }},
		{"spec", func(c *Card) { c.Spec = json.RawMessage(`[]`) }},
	}
	for _, tc := range cases {
		c := good
		tc.mod(&c)
		err := ValidateCard(b, c)
		wantField(t, err, tc.field)
		if tc.field == "state" {
			for _, col := range b.Names() {
				if !strings.Contains(err.Error(), col) {
					t.Errorf("unknown state message %q does not list column %s", err, col)
				}
			}
		}
	}
}
