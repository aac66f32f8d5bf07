package workspace

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
)

// TestVerify: the commands run in the workspace in order with the given
// environment; the step stops at the first failure and keeps its exit code
// and last output; a command that runs past the step's timeout is stopped
// and the step fails as timed out; a command that cannot start fails it.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	env := append(proc.BaseEnv(), "CHECK=ok")
	var log bytes.Buffer
	res := Verify(context.Background(), dir, []string{`test "$CHECK" = ok && touch first`, `echo lint is fine`}, env, 10*time.Second, &log)
	if !res.Passed || res.Ran != 2 || res.Command != "" {
		t.Fatalf("passing step = %+v", res)
	}
	if _, err := os.Stat(dir + "/first"); err != nil || !strings.Contains(log.String(), "lint is fine") {
		t.Fatalf("the first command did not run in the workspace (%v), or the log lacks output: %q", err, log.String())
	}
	res = Verify(context.Background(), dir, []string{"true", "printf 'FAIL TestParse\\n' ; echo 'want 3, got 4' >&2; exit 7", "touch never"}, env, 10*time.Second, nil)
	if res.Passed || res.Ran != 2 || res.ExitCode != 7 || !strings.Contains(res.Command, "exit 7") ||
		!strings.Contains(res.Output, "FAIL TestParse") || !strings.Contains(res.Output, "want 3, got 4") {
		t.Fatalf("failing step = %+v", res)
	}
	if _, err := os.Stat(dir + "/never"); err == nil {
		t.Fatal("the step went on after a failed command")
	}
	start := time.Now()
	res = Verify(context.Background(), dir, []string{"echo started; sleep 30"}, env, 300*time.Millisecond, nil)
	if res.Passed || !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Output, "started") || time.Since(start) > 10*time.Second {
		t.Fatalf("timed-out step = %+v after %s", res, time.Since(start))
	}
	res = Verify(context.Background(), dir+"/missing", []string{"true"}, env, time.Second, nil)
	if res.Passed || res.ExitCode != -1 || res.Output == "" {
		t.Fatalf("a step in a missing directory = %+v", res)
	}
	big := Verify(context.Background(), dir, []string{"yes 'a line of output' | head -c 200000; exit 1"}, env, 10*time.Second, nil)
	if big.Passed || len(big.Output) > verifyTailBytes || !strings.HasPrefix(big.Output, "a line") {
		t.Fatalf("a loud failure keeps %d bytes (want at most %d, from a line start): %.40q", len(big.Output), verifyTailBytes, big.Output)
	}
}
