package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// `drover classify` over every captured Claude Code and Codex run prints
// the expected kind (expected.json: kind or one of alt_kinds).
func TestClassifyFixtures(t *testing.T) {
	t.Parallel()
	e := &env{t: t, dir: t.TempDir()} // no WORKFLOW.md: --agent names the adapter
	for _, agentKind := range []string{"claude", "codex"} {
		root := filepath.Join("..", "..", "internal", "agent", agentKind, "testdata")
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, en := range ents {
			if !en.IsDir() || en.Name() == "fuzz" { // testdata/fuzz is the fuzz corpus, not a capture
				continue
			}
			dir := filepath.Join(root, en.Name())
			read := func(name string) []byte {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			var exp struct {
				Kind     string   `json:"kind"`
				AltKinds []string `json:"alt_kinds"`
			}
			if err := json.Unmarshal(read("expected.json"), &exp); err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			code, err := strconv.Atoi(strings.TrimSpace(string(read("exit_code"))))
			if err != nil {
				t.Fatal(err)
			}
			stderrFile, _ := filepath.Abs(filepath.Join(dir, "stderr"))
			n++
			t.Run(agentKind+"/"+en.Name(), func(t *testing.T) {
				e := &env{t: t, dir: e.dir}
				args := []string{"classify", "--agent", agentKind, "--exit-code", strconv.Itoa(code), "--stderr", stderrFile}
				if code == 124 {
					// The capture harness's `timeout` killed the run; inside
					// drover the dispatcher knows it did, and says so.
					args = append(args, "--killed-for", "timeout")
				}
				out, errOut, rc := e.drover(bytes.NewReader(read("stdout")), args...)
				if rc != 0 {
					t.Fatalf("exit %d: %s", rc, errOut)
				}
				var got struct {
					Kind    string `json:"kind"`
					Message string `json:"message"`
					Source  string `json:"source"`
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				want := append([]string{exp.Kind}, exp.AltKinds...)
				for _, k := range want {
					if got.Kind == k {
						return
					}
				}
				t.Errorf("kind %s (source %s, message %q); want one of %v", got.Kind, got.Source, got.Message, want)
			})
		}
		if n == 0 {
			t.Fatalf("no fixtures under %s", root)
		}
	}
}

// An unrecognised error is unknown, with its text kept.
func TestClassifyUnknownKeepsTheText(t *testing.T) {
	t.Parallel()
	e := &env{t: t, dir: t.TempDir()}
	msg := "the frobnicator declined with code XJ-9 for reasons of its own"
	out, errOut, rc := e.drover(strings.NewReader(msg+"\n"), "classify", "--agent", "command", "--exit-code", "3")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	var got struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "unknown" || !strings.Contains(got.Message, "XJ-9") {
		t.Errorf("got %+v; want unknown with the text kept", got)
	}
}
