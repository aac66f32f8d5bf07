package realcli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// TestFallbackFromClaudeCodeToCodex: two real CLIs, each against a fake
// provider of its own. Claude Code's answers a credit error, which pauses
// the claude profile; its cards run on codex (its fallback) and finish,
// each claim saying why. Once the credit is back and claude is resumed, a
// new card runs on Claude Code again.
func TestFallbackFromClaudeCodeToCodex(t *testing.T) {
	claudes, codexes := installed(t, "claude"), installed(t, "codex")
	cl, cx := claudes[len(claudes)-1], codexes[len(codexes)-1]
	s := scenario{name: "fallback"}
	anthropic, openai := fp.New(t), fp.New(t)
	anthropic.Default(fp.CreditBalance())
	h := &harness{t: t, dir: t.TempDir()}
	var prof strings.Builder
	fmt.Fprintf(&prof, "default: claude\nprofiles:\n")
	for _, p := range []struct {
		c     cli
		base  string
		extra string
	}{{cl, anthropic.URL(), "    fallback: [codex]\n"}, {cx, openai.URL(), ""}} {
		fmt.Fprintf(&prof, "  %s:\n    kind: %s\n    command: %s\n    timeout: 300s\n    stall_timeout: 180s\n%s    env:\n", p.c.kind, p.c.kind, p.c.bin, p.extra)
		writeEnvYAML(&prof, h.profileEnv(p.c, scenario{name: s.name + "-" + p.c.kind}, p.base))
	}
	testkit.NewWorkflow().
		Set("agents", prof.String()).
		Set("policy", "max_attempts: 3\nbackoff: {base: 1s, max: 2s, jitter: 0}").
		Set("dispatch", "max_concurrent: 2\npoll_interval: 500ms").
		Write(t, h.dir)
	var cards []card
	for i := range 3 {
		var cd card
		h.jsonOf(&cd, "card", "add", "--title", fmt.Sprintf("%s: fix %d", marker(s), i), "--state", "ready")
		cards = append(cards, cd)
	}
	h.serve()
	deadline := time.Now().Add(8 * time.Minute)
	for _, c := range cards {
		cd := h.settledIn(c.Identifier, "review", deadline)
		last := newest(cd.Runs)
		if last.Agent != "codex" || last.Kind != "succeeded" {
			t.Errorf("%s's last run %s on %s, want succeeded on codex (claude's fallback)", c.Identifier, last.Kind, last.Agent)
		}
		for _, r := range cd.Runs {
			if r.Counted {
				t.Errorf("%s's run on %s (%s) counted toward the card's budget", c.Identifier, r.Agent, r.Kind)
			}
		}
		if !h.claimSays(c.Identifier, last.ID, "claude held", "ran on codex") {
			t.Errorf("%s's claim of its codex run does not say why it ran there", c.Identifier)
		}
	}
	if a := h.profile("claude"); a.State != "open" || !strings.Contains(a.Reason, "quota_exhausted") {
		t.Errorf("claude is %s (%s), want held (open, probing) by the credit error (quota_exhausted)", a.State, a.Reason)
	}

	// The credit is back: resumed, claude takes new cards again.
	anthropic.Default(fp.Success("Done."))
	if _, err := h.drover("agent", "resume", "claude"); err != nil {
		t.Fatal(err)
	}
	var after card
	h.jsonOf(&after, "card", "add", "--title", marker(s)+": after the credit", "--state", "ready")
	cd := h.settledIn(after.Identifier, "review", deadline)
	if r := newest(cd.Runs); r.Agent != "claude" {
		t.Errorf("after claude was resumed %s ran on %s, want claude", after.Identifier, r.Agent)
	}
}

// settledIn waits for the card to reach state with no run open.
func (h *harness) settledIn(id, state string, deadline time.Time) card {
	h.t.Helper()
	for {
		var cd card
		h.jsonOf(&cd, "card", "show", id)
		if cd.State == state && len(cd.Runs) > 0 && newest(cd.Runs).FinishedAt != nil {
			return cd
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s did not reach %s: state %s (%s), runs %+v\nserve log:\n%s", id, state, cd.State, cd.StateReason, cd.Runs, h.log.String())
		}
		time.Sleep(time.Second)
	}
}

// claimSays reports whether the claimed event of run holds every word.
func (h *harness) claimSays(id, runID string, words ...string) bool {
	var evs []struct {
		RunID  string `json:"run_id"`
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	h.jsonOf(&evs, "events", "--card", id)
	for _, ev := range evs {
		if ev.Type == "claimed" && ev.RunID == runID {
			for _, w := range words {
				if !strings.Contains(ev.Reason, w) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// newest is the run of the highest attempt.
func newest(rs []run) run {
	n := rs[0]
	for _, r := range rs {
		if r.Attempt > n.Attempt {
			n = r
		}
	}
	return n
}
