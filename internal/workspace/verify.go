package workspace

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/board"
)

// verifyTailBytes is how much of a failed check's output is kept: enough
// for the next attempt's prompt to show what failed, not a whole log.
const verifyTailBytes = 8 << 10

// Verify runs the verify step's commands in dir, one after another with
// `/bin/sh -lc`, exactly env as their environment, each in its own process
// group, all within timeout (killed when it passes or ctx ends). It stops
// at the first command that fails. Output goes to logw (may be nil); the
// failed command's last output is in the result.
func Verify(ctx context.Context, dir string, commands []string, env []string, timeout time.Duration, logw io.Writer) board.VerifyResult {
	start := time.Now()
	deadline := start.Add(timeout)
	res := board.VerifyResult{Passed: true}
	defer func() { res.DurationMS = time.Since(start).Milliseconds() }()
	for i, cmd := range commands {
		left := time.Until(deadline)
		if left <= 0 {
			res.Passed, res.Command, res.TimedOut, res.ExitCode = false, cmd, true, -1
			res.Output = fmt.Sprintf("not run: the verify step's timeout (%s) passed before it", timeout)
			return res
		}
		tail := &noteFreeTail{max: verifyTailBytes}
		w := io.Writer(tail)
		if logw != nil {
			fmt.Fprintf(logw, "%sverify %d of %d in %s: %s]\n", proc.NotePrefix, i+1, len(commands), dir, cmd)
			w = io.MultiWriter(logw, tail)
		}
		ex, err := proc.Run(ctx, proc.Spec{Path: "/bin/sh", Args: []string{"-lc", cmd}, Dir: dir, Env: env, Log: w,
			MaxLogBytes: -1, Timeout: left, Grace: 2 * time.Second})
		res.Ran = i + 1
		switch {
		case err != nil:
			res.Passed, res.Command, res.ExitCode, res.Output = false, cmd, -1, "could not start: "+err.Error()
		case ex.KilledFor != "":
			res.Passed, res.Command, res.ExitCode, res.TimedOut = false, cmd, -1, ex.KilledFor == "timeout"
			res.Output = strings.TrimSpace(tail.text() + fmt.Sprintf("\n[stopped: %s]", ex.KilledFor))
		case ex.Signaled || ex.Code != 0:
			res.Passed, res.Command, res.ExitCode, res.Output = false, cmd, ex.Code, strings.TrimSpace(tail.text())
		}
		res.Output = printable(res.Output)
		if !res.Passed {
			return res
		}
	}
	return res
}

// printable keeps text a prompt and a terminal can carry: control
// characters other than newline and tab become spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, s)
}
