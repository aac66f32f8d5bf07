package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpEverywhere walks the Cobra tree: --help works on every command.
func TestHelpEverywhere(t *testing.T) {
	root := (&app{}).rootCmd()
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		for _, flag := range []string{"--help", "-h"} {
			var o, e bytes.Buffer
			code := Main(append(append([]string{}, path...), flag), &o, &e)
			if code != 0 || e.Len() != 0 {
				t.Errorf("drover %s %s: exit %d stderr %q", strings.Join(path, " "), flag, code, e.String())
			}
			summary := c.Short
			if c.Long != "" {
				summary = strings.SplitN(c.Long, "\n", 2)[0]
			}
			if !strings.Contains(o.String(), "Usage:") || !strings.Contains(o.String(), summary) {
				t.Errorf("drover %s %s: help lacks usage or summary:\n%s", strings.Join(path, " "), flag, o.String())
			}
		}
		if c.Short == "" {
			t.Errorf("drover %s has no short description", strings.Join(path, " "))
		}
		n++
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(root)
	if n < 25 {
		t.Fatalf("walked only %d commands", n)
	}
}

// TestBadInputs: every bad input gets exit 1 or 2, one line on stderr naming
// the field (with --json the error envelope), and leaves the store as it was.
func TestBadInputs(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "open card")
	e.ok("card", "add", "--title", "done card")
	e.ok("card", "mv", "DRV-2", "done")
	e.ok("card", "add", "--title", "blocked card")
	e.ok("card", "block", "DRV-3", "--reason", "waiting")
	e.ok("card", "add", "--title", "cancelled card")
	e.ok("card", "cancel", "DRV-4")

	write := func(name string, data []byte) string {
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badYAML := write("bad-yaml.md", []byte("---\nboard: [\n---\n"))
	badBoard := write("bad-board.md", []byte("---\nboard:\n  prefix: drv\n---\n"))
	badRole := write("bad-role.md", []byte("---\nboard:\n  columns:\n    - {name: ready, role: eligble}\n---\n"))
	bigBody := write("big.md", bytes.Repeat([]byte("a"), 2<<20))
	latin1 := write("latin1.md", []byte("caf\xe9 cr\xe8me\n"))
	specArr := write("arr.json", []byte(`[1, 2]`))
	specBig := write("big.json", []byte(`{"x":"`+strings.Repeat("a", 300<<10)+`"}`))
	specDeep := write("deep.json", []byte(strings.Repeat("[", 40)+strings.Repeat("]", 40)))
	deep := `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}"
	hostile := "../../etc/passwd"
	unreachable := "postgres://postgres@127.0.0.1:1/x"

	cases := []struct {
		name  string
		args  []string
		exit  int
		field string // the message must name it
	}{
		{"malformed yaml", []string{"--config", badYAML, "card", "add", "--title", "x"}, 2, "bad-yaml.md:2"},
		{"bad board prefix", []string{"--config", badBoard, "card", "add", "--title", "x"}, 2, "board.prefix"}, // a read command reads on, warned: status_refused_test.go
		{"bad column role", []string{"--config", badRole, "card", "add", "--title", "x"}, 2, "board.columns[0].role"},
		{"unknown state on add", []string{"card", "add", "--title", "x", "--state", "doing"}, 2, "state"},
		{"unknown state on mv", []string{"card", "mv", "DRV-1", "doing"}, 2, "state"},
		{"unknown state on ls", []string{"card", "ls", "--state", "doing"}, 2, "state"},
		{"add into running", []string{"card", "add", "--title", "x", "--state", "in_progress"}, 2, "state"},
		{"mv into running", []string{"card", "mv", "DRV-1", "in_progress"}, 1, "in_progress"},
		{"title control char", []string{"card", "add", "--title", "bad\x07title"}, 2, "title"},
		{"title newline", []string{"card", "add", "--title", "two\nlines"}, 2, "title"},
		{"title empty", []string{"card", "add", "--title", ""}, 2, "title"},
		{"title missing", []string{"card", "add"}, 2, "title"},
		{"title too long", []string{"card", "add", "--title", strings.Repeat("t", 501)}, 2, "title"},
		{"edit title control char", []string{"card", "edit", "DRV-1", "--title", "a\x1b[31m"}, 2, "title"},
		{"2 MiB body file", []string{"card", "add", "--title", "x", "--body-file", bigBody}, 2, "body-file"},
		{"2 MiB body", []string{"card", "add", "--title", "x", "--body", strings.Repeat("b", 2<<20)}, 2, "body"},
		{"invalid UTF-8 body file", []string{"card", "add", "--title", "x", "--body-file", latin1}, 2, "body"},
		{"missing body file", []string{"card", "add", "--title", "x", "--body-file", filepath.Join(e.dir, "nope.md")}, 2, "body-file"},
		{"body and body-file", []string{"card", "add", "--title", "x", "--body", "b", "--body-file", latin1}, 2, "--body-file"},
		{"spec not JSON", []string{"card", "add", "--title", "x", "--spec", "{plan: x}"}, 2, "spec"},
		{"spec array", []string{"card", "add", "--title", "x", "--spec", "[1,2]"}, 2, "spec"},
		{"spec array file", []string{"card", "add", "--title", "x", "--spec-file", specArr}, 2, "spec"},
		{"spec too deep", []string{"card", "add", "--title", "x", "--spec", deep}, 2, "spec"},
		{"spec too deep file", []string{"card", "add", "--title", "x", "--spec-file", specDeep}, 2, "spec"},
		{"spec 300 KiB", []string{"card", "add", "--title", "x", "--spec-file", specBig}, 2, "spec"},
		{"edit spec array", []string{"card", "edit", "DRV-1", "--spec", "[]"}, 2, "spec"},
		{"priority 9", []string{"card", "add", "--title", "x", "--priority", "9"}, 2, "priority"},
		{"priority -1 on edit", []string{"card", "edit", "DRV-1", "--priority", "-1"}, 2, "priority"},
		{"priority not a number", []string{"card", "add", "--title", "x", "--priority", "high"}, 2, "--priority"},
		{"unknown agent", []string{"card", "add", "--title", "x", "--agent", "gpt"}, 2, "agent"},
		{"bad label", []string{"card", "add", "--title", "x", "--label", "needs review"}, 2, "labels[0]"},
		{"unknown blocker", []string{"card", "add", "--title", "x", "--blocked-by", "DRV-99"}, 2, "blocked_by[0]"},
		{"self blocker", []string{"card", "edit", "DRV-1", "--blocked-by", "DRV-1"}, 2, "blocked_by[0]"},
		{"unknown card show", []string{"card", "show", "DRV-999"}, 2, "DRV-999"},
		{"unknown card edit", []string{"card", "edit", "DRV-999", "--title", "x"}, 2, "DRV-999"},
		{"unknown card resume", []string{"card", "resume", "nope"}, 2, "nope"},
		{"hostile id show", []string{"card", "show", hostile}, 2, hostile},
		{"hostile id mv", []string{"card", "mv", hostile, "done"}, 2, hostile},
		{"hostile id comment", []string{"card", "comment", hostile, "hi"}, 2, hostile},
		{"hostile id events", []string{"events", "--card", hostile}, 2, hostile},
		{"hostile id runs", []string{"runs", hostile}, 2, hostile},
		{"hostile run logs", []string{"logs", hostile}, 2, "RUN"},
		{"mv out of done", []string{"card", "mv", "DRV-2", "ready"}, 1, "reopen DRV-2"},
		{"mv out of blocked", []string{"card", "mv", "DRV-3", "ready"}, 1, "resume DRV-3"},
		{"mv out of cancelled", []string{"card", "mv", "DRV-4", "backlog"}, 1, "resume DRV-4"},
		{"resume a ready card", []string{"card", "resume", "DRV-1"}, 1, "DRV-1"},
		{"reopen a ready card", []string{"card", "reopen", "DRV-1"}, 1, "DRV-1"},
		{"block without reason", []string{"card", "block", "DRV-1"}, 2, "reason"},
		{"block a done card", []string{"card", "block", "DRV-2", "--reason", "x"}, 1, "DRV-2"},
		{"cancel a done card", []string{"card", "cancel", "DRV-2"}, 1, "reopen"},
		{"answer a ready card", []string{"card", "answer", "DRV-1", "yes"}, 1, "DRV-1"},
		{"empty comment", []string{"card", "comment", "DRV-1", ""}, 2, "text"},
		{"edit state", []string{"card", "edit", "DRV-1", "--state", "done"}, 2, "--state"},
		{"edit nothing", []string{"card", "edit", "DRV-1"}, 2, "--title"},
		{"unknown flag", []string{"card", "add", "--title", "x", "--colour", "red"}, 2, "--colour"},
		{"unknown global flag", []string{"--verbose", "card", "ls"}, 2, "--verbose"},
		{"unknown command", []string{"card", "frob"}, 2, "frob"},
		{"unknown top command", []string{"crad", "ls"}, 2, "crad"},
		{"missing args show", []string{"card", "show"}, 2, "ID"},
		{"missing args mv", []string{"card", "mv", "DRV-1"}, 2, "ID STATE"},
		{"missing args comment", []string{"card", "comment", "DRV-1"}, 2, "ID TEXT"},
		{"missing args answer", []string{"card", "answer"}, 2, "ID TEXT"},
		{"extra args", []string{"card", "ls", "DRV-1"}, 2, "DRV-1"},
		{"bad --since", []string{"events", "--since", "yesterday"}, 2, "since"},
		{"unreachable postgres", []string{"--store", unreachable, "card", "add", "--title", "x"}, 1, "--store"},
		{"unreachable postgres ls", []string{"--store", unreachable, "card", "ls"}, 1, "postgres://postgres@127.0.0.1:1/x"},
	}
	before := snapshot(t, e.dsn)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := tc.args
				if asJSON {
					args = append([]string{"--json"}, args...)
				}
				code, out, errs := e.run(args...)
				if code != tc.exit {
					t.Fatalf("json=%v: exit %d, want %d (stderr %q)", asJSON, code, tc.exit, errs)
				}
				if out != "" {
					t.Errorf("json=%v: stdout %q, want nothing", asJSON, out)
				}
				if !strings.HasSuffix(errs, "\n") || strings.Count(errs, "\n") != 1 {
					t.Fatalf("json=%v: stderr is not one line: %q", asJSON, errs)
				}
				msg := strings.TrimSuffix(errs, "\n")
				if asJSON {
					var env struct {
						Error struct {
							Code    string `json:"code"`
							Message string `json:"message"`
						} `json:"error"`
					}
					if err := json.Unmarshal([]byte(msg), &env); err != nil || env.Error.Code == "" || env.Error.Message == "" {
						t.Fatalf("json error envelope %q: %v", msg, err)
					}
					msg = env.Error.Message
				} else if !strings.HasPrefix(msg, "drover: ") {
					t.Errorf("message %q lacks the drover: prefix", msg)
				}
				if !strings.Contains(msg, tc.field) {
					t.Errorf("json=%v: message %q does not name %q", asJSON, msg, tc.field)
				}
				if len(msg) > 600 && tc.exit == 2 {
					t.Errorf("message is %d bytes; echo less of the input", len(msg))
				}
			}
			if after := snapshot(t, e.dsn); after != before {
				t.Fatalf("the store changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
