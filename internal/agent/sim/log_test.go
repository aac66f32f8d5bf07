package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/claude"
	"github.com/drover-dev/drover/internal/board"
)

func runSim(t *testing.T, spec, logPath string) agent.Result {
	t.Helper()
	inv := agent.Invocation{Card: board.Card{Identifier: "DRV-1", Title: "t", Spec: []byte(spec)},
		Run: board.Run{ID: "r1", Attempt: 1}, Prompt: "do t", LogPath: logPath}
	res, err := New().Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The log holds every stream-json line the sim played, in a directory the
// sim makes when the caller did not, and parses back to the run's result.
func TestLogHoldsEveryLine(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "logs", "DRV-1", "r1.log")
	runSim(t, `{"sim": ["succeeded"], "sim_delay": "0s"}`, logPath)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"init"`) || !strings.Contains(lines[2], `"result"`) {
		t.Fatalf("log lines = %q", lines)
	}
	p := claude.NewParser()
	for _, l := range lines {
		p.Feed([]byte(l))
	}
	if st := p.Structured(); st.SessionID != "sim-r1" {
		t.Fatalf("the log parses to session %q, want sim-r1", st.SessionID)
	}
}

// The input is recorded only when the spec asks for it.
func TestInputRecordedOnRequest(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.log")
	runSim(t, `{"sim": ["succeeded"], "sim_delay": "0s"}`, plain)
	if _, err := os.Stat(InputPath(plain)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a run without sim_record_input left an input file (stat: %v)", err)
	}
	asked := filepath.Join(dir, "asked.log")
	runSim(t, `{"sim": ["succeeded"], "sim_delay": "0s", "sim_record_input": true}`, asked)
	b, err := os.ReadFile(InputPath(asked))
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil || in.Prompt != "do t" {
		t.Fatalf("input = %s (%v)", b, err)
	}
}

// A run with sim_every prints a line that often during its delay, each one
// reported as progress, and still ends with its scripted result.
func TestEveryPrintsDuringTheDelay(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "r1.log")
	var lines []string
	inv := agent.Invocation{Card: board.Card{Identifier: "DRV-1", Title: "t", Spec: []byte(`{"sim": ["succeeded"], "sim_delay": "250ms", "sim_every": "50ms"}`)},
		Run: board.Run{ID: "r1", Attempt: 1}, Prompt: "do t", LogPath: logPath,
		Progress: func(p agent.Progress) { lines = append(lines, p.LastLine) }}
	res, err := New().Run(context.Background(), inv)
	if err != nil || res.Signals.ExitCode != 0 {
		t.Fatalf("run = %+v, %v", res.Signals, err)
	}
	steps := 0
	for _, l := range lines {
		if strings.Contains(l, "Still working on DRV-1") {
			steps++
		}
	}
	if steps < 3 {
		t.Fatalf("%d progress lines during the delay, want about 4: %q", steps, lines)
	}
	if _, err := ParseSpec([]byte(`{"sim_every": "0s"}`)); err == nil || !strings.Contains(err.Error(), "sim_every") {
		t.Fatalf("sim_every 0s: %v, want an error naming spec.sim_every", err)
	}
}
