package hostile_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// hostileOutput is what a hostile agent prints: a window title (OSC ... BEL),
// a screen clear (CSI 2 J), the C1 forms of both, a bell, a backspace and a
// DCS string, on stdout and stderr.
const hostileOutput = "\x1b]0;pwned\x07\x1b[2J\u009b2J\u009d0;c1\u009c bell\x07 bs\x08 \x1bPq#0\x1b\\ agent failed"

const terminalWorkflow = `---
agents:
  default: evil
  profiles:
    evil: {kind: command, command: ./evil.sh, prompt: stdin}
    sim: {kind: sim}
policy: {max_attempts: 1}
dispatch: {poll_interval: 200ms, lease: 3s}
workspace: {cleanup: never}
server: {port: 0}
---
Work on {{ card.title }}
`

// Agent text shown by the CLI (card show, status, explain, runs, logs,
// events, card ls, a parked question) never reaches the terminal with an
// escape sequence, BEL or C1 control in it, as text or as JSON; the run log
// keeps it verbatim (issue 13, item 6).
func TestAgentOutputIsNeutralisedOnTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs drover serve")
	}
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("WORKFLOW.md", terminalWorkflow, 0o644)
	write("evil.sh", "#!/bin/sh\ncat >/dev/null\nprintf '"+shellOctal(hostileOutput)+"\\n'\nprintf '"+shellOctal(hostileOutput)+"\\n' >&2\nexit 1\n", 0o755)
	bin := testkit.Binary(t)
	cli := testkit.CLI{T: t, Dir: dir, Env: append(os.Environ(), "DROVER_STORE=")}
	drover := func(args ...string) (string, string, int) { return cli.Run(nil, args...) }
	mustJSON := func(v any, args ...string) { t.Helper(); cli.JSON(v, args...) }
	var evil, asks struct{ Identifier string }
	mustJSON(&evil, "card", "add", "--title", "evil output")
	question, _ := json.Marshal(map[string]any{"sim": []string{"input_required"}, "sim_question": hostileOutput + "?"})
	mustJSON(&asks, "card", "add", "--title", "hostile question", "--agent", "sim", "--spec", string(question))

	serve := exec.Command(bin, "serve")
	serve.Dir = dir
	serve.Env = append(os.Environ(), "DROVER_STORE=")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var serveLog bytes.Buffer
	serve.Stdout, serve.Stderr = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var cards []struct{ Identifier, State string }
		mustJSON(&cards, "card", "ls")
		settled := 0
		for _, c := range cards {
			if c.State == "blocked" || c.State == "awaiting_input" {
				settled++
			}
		}
		if settled == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cards did not settle: %+v\n%s", cards, serveLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = serve.Process.Signal(syscall.SIGTERM)
	_ = serve.Wait()

	var runs []struct {
		ID      string `json:"id"`
		LogPath string `json:"log_path"`
	}
	mustJSON(&runs, "runs", evil.Identifier)
	if len(runs) != 1 || runs[0].LogPath == "" {
		t.Fatalf("runs of %s: %+v", evil.Identifier, runs)
	}
	if b, err := os.ReadFile(runs[0].LogPath); err != nil || !strings.Contains(string(b), "\x1b]0;pwned\x07") {
		t.Fatalf("the run log must keep the agent's output verbatim: %v %q", err, b)
	}
	runID := runs[0].ID
	sawAgentText := false
	for _, args := range [][]string{
		{"card", "show", evil.Identifier}, {"card", "show", asks.Identifier}, {"status"},
		{"explain", evil.Identifier}, {"explain", asks.Identifier}, {"runs"}, {"runs", evil.Identifier},
		{"logs", runID}, {"events"}, {"card", "ls"}, {"board", "show"},
	} {
		for _, asJSON := range []bool{false, true} {
			full := args
			if asJSON {
				if args[0] == "logs" {
					continue
				}
				full = append([]string{"--json"}, args...)
			}
			out, errs, code := drover(full...)
			if code != 0 {
				t.Fatalf("drover %v: exit %d: %s", full, code, errs)
			}
			if strings.Contains(out, "pwned") || strings.Contains(out, "agent failed") {
				sawAgentText = true
			}
			for _, s := range []struct{ name, text string }{{"stdout", out}, {"stderr", errs}} {
				for i, r := range s.text {
					if r == 0x1b || r == 0x07 || r == 0x08 || (r >= 0x80 && r <= 0x9f) {
						t.Errorf("drover %s: %s has %U at byte %d: %q", strings.Join(full, " "), s.name, r, i, around(s.text, i))
						break
					}
				}
			}
		}
	}
	if !sawAgentText {
		t.Fatal("no command showed the agent's text; the test checks nothing")
	}
}

// shellOctal writes s for a printf format: every byte as \ooo.
func shellOctal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("\\" + string(rune('0'+s[i]>>6)) + string(rune('0'+(s[i]>>3)&7)) + string(rune('0'+s[i]&7)))
	}
	return b.String()
}

func around(s string, i int) string {
	return s[max(0, i-30):min(len(s), i+30)]
}
