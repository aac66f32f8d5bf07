package dispatch

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/tracing"
	"github.com/drover-dev/drover/internal/workspace"
)

// Done means verified. When the profile has a verify step (WORKFLOW.md
// verify:, or agents.profiles.NAME.verify), a run that would be done (a
// clean exit, or the agent's drover_done) runs its commands in the
// workspace, within the step's timeout; a failure is verify_failed
// (counted, retried), its output kept on the run and shown to the next
// attempt's prompt (the verify variable).

// verify runs the verify step of an attempt whose verdict is cls, and
// returns the verdict with it and the step's result (nil when none ran).
func (r *runner) verify(a attempt, cfg *config.Config, ws prepared, logPath string, cls policy.Classification) (policy.Classification, *board.VerifyResult) {
	v := cfg.VerifyFor(a.profile)
	if len(v.Commands) == 0 {
		return cls, nil
	}
	rep, known := r.report(a)
	if known && policy.ApplyReport(cls, rep).Kind != policy.KindSucceeded {
		return cls, nil // not done (an unread report may say done: the step runs)
	}
	if sig, stopped := r.stoppedBy(a); stopped {
		// Stopped before its checks could run: not done, whatever it said.
		return policy.Classify(sig, nil), nil
	}
	env := ws.hookEnv
	if env == nil {
		env = envSlice(ws.env)
	}
	var log io.Writer // the step's own log beside the run's
	if f, err := os.OpenFile(logPath+".verify", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		log = f
		defer f.Close()
	}
	ctx, sp := tracing.Start(a.ctx, tracing.SpanHook, tracing.Hook("verify"))
	vr := workspace.Verify(ctx, ws.dir, v.Commands, env, v.Timeout, log)
	if sig, stopped := r.stoppedBy(a); stopped {
		// drover stopped the checks: they did not fail, and the next prompt
		// must not say they did.
		tracing.End(sp, context.Cause(a.ctx))
		return policy.Classify(sig, nil), nil
	}
	if vr.Passed {
		tracing.End(sp, nil)
		a.log.Info("verify passed", "commands", vr.Ran, "duration_ms", vr.DurationMS)
		return cls, &vr
	}
	msg := verifyMessage(vr)
	tracing.End(sp, fmt.Errorf("%s", msg))
	a.log.Info("verify failed", "command", vr.Command, "exit_code", vr.ExitCode, "timed_out", vr.TimedOut)
	return policy.Classification{Kind: policy.KindVerifyFailed, Message: msg, Source: policy.VerifySource}, &vr
}

// report is the agent's own report on the attempt's run, as stored; known
// is false when it could not be read.
func (r *runner) report(a attempt) (*board.AgentReport, bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), verifyReadTimeout)
	defer cancel()
	run, err := r.st.GetRun(ctx, a.run.ID)
	if err != nil {
		a.log.Warn("could not read the agent's report before the verify step; the checks run", "err", err)
		return nil, false
	}
	return run.Report, true
}

// verifyMessage is a failed step in words: the command, how it ended, and
// its last output lines.
func verifyMessage(vr board.VerifyResult) string {
	how := fmt.Sprintf("exited with code %d", vr.ExitCode)
	switch {
	case vr.TimedOut:
		how = "timed out"
	case vr.ExitCode < 0:
		how = "did not finish"
	}
	msg := fmt.Sprintf("verify: `%s` %s after the agent finished", vr.Command, how)
	if out := strings.TrimSpace(vr.Output); out != "" {
		msg += ": " + excerpt.Clip(lastLines(out, 12), 1500)
	}
	return msg
}

// verifyPrompt is what the next attempt's prompt shows of a failed step.
func verifyPrompt(vr *board.VerifyResult) string {
	if vr == nil || vr.Passed {
		return ""
	}
	return strings.TrimSpace(verifyMessage(board.VerifyResult{Command: vr.Command, ExitCode: vr.ExitCode, TimedOut: vr.TimedOut}) + ". Its output:\n" + vr.Output)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// verifyReadTimeout bounds the read of the run's report before the step.
const verifyReadTimeout = 10 * time.Second
