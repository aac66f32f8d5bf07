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
