package dispatch

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/policy"
)

// exitNote is the line agent/proc writes when the agent process exits.
var exitNote = regexp.MustCompile(`(?m)^\[drover: exit code (-?\d+) after [^\]]*\]$`)

const maxRecoverLog = 8 << 20

// classifyFromLog recovers a run whose agent finished but whose owner died
// before routing it: the run log records the exit code and holds the agent's
// output, so the run is classified as if it had been routed at the time.
// ok is false when the log does not show a finished agent.
func classifyFromLog(path, agentKind string, rules []policy.Rule, now time.Time) (policy.Classification, bool) {
	if path == "" {
		return policy.Classification{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return policy.Classification{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxRecoverLog {
		_, _ = f.Seek(st.Size()-maxRecoverLog, io.SeekStart)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return policy.Classification{}, false
	}
	all := exitNote.FindAllSubmatch(data, -1)
	if len(all) == 0 {
		return policy.Classification{}, false
	}
	code, err := strconv.Atoi(string(all[len(all)-1][1]))
	if err != nil {
		return policy.Classification{}, false
	}
	var stdout, stderr bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte(proc.NotePrefix)):
		case bytes.HasPrefix(line, []byte(proc.StderrPrefix)):
			stderr.Write(line[len(proc.StderrPrefix):])
		default:
			stdout.Write(line)
		}
	}
	cls := registry.ClassifyOutput(agentKind, code, stdout.Bytes(), stderr.Bytes(), now, rules)
	cls.Source = "recovered from the run log: " + cls.Source
	return cls, true
}
