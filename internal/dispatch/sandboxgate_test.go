package dispatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/policy"
)

// okAgent succeeds at once; on a node that must never run it, it fails the
// test.
type okAgent struct {
	t      *testing.T
	forbid string // why this node must not run it ("" = it may)
}

func (a okAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	if a.forbid != "" {
		a.t.Errorf("%s ran %s: %s", inv.Run.Node, inv.Card.Identifier, a.forbid)
	}
	return agent.Result{Signals: policy.Signals{AgentKind: "command", ExitCode: 0}}, nil
}

// A sandboxed profile whose sandbox cannot start on one node pauses only
// there while another live node can run it: the first node lists it as
// unusable and claims none of its cards, the other runs them all, and the
// profile stays open. Once no live node can run it, it is paused
// board-wide as a config_error.
func TestAnUnsandboxableNodeLeavesTheProfileToTheOthers(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(3).Set("agents", "default: boxed\nprofiles:\n  boxed: {kind: command, command: /bin/true, sandbox: {kind: bwrap}}"))
	const noBwrap = "bwrap is not installed here (test)"
	node := func(name, why string) *Dispatcher {
		d, err := New(Options{Store: w.st, Config: w.cfg, Node: name, LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
			SandboxProbe: func(sandbox.Config) string { return why },
			NewAgent: func(agent.Profile) (agent.Agent, error) {
				return okAgent{t: t, forbid: map[bool]string{true: "its sandbox cannot start there"}[why != ""]}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	able, unable := node("able", ""), node("unable", noBwrap)
	stopAble := w.run(able)
	eventually(t, 10*time.Second, "node able registered", func() bool {
		ns, _ := w.st.ListNodes(context.Background())
		return len(ns) == 1 && ns[0].LastTick != nil
	})
	stopUnable := w.run(unable)
	defer stopUnable()
	var ids []string
	for _, title := range []string{"one", "two", "three"} {
		ids = append(ids, w.add(title, "", "{}").Identifier)
	}
	for _, id := range ids {
		w.waitFor(id, "review, run by the node that can", inState("review"))
	}
	bs, err := readBreakers(context.Background(), w.st)
	if err != nil {
		t.Fatal(err)
	}
	if b := bs["boxed"]; b.State == policy.BreakerPaused {
		t.Fatalf("the profile was paused board-wide (%s) while a live node could run it", b.Reason)
	}
	eventually(t, 10*time.Second, "node unable lists boxed as unusable", func() bool {
		ns, _ := w.st.ListNodes(context.Background())
		for _, n := range ns {
			var st NodeStatus
			if n.Name == "unable" && json.Unmarshal(n.Status, &st) == nil && strings.Contains(st.Unusable["boxed"], noBwrap) {
				return true
			}
		}
		return false
	})

	stopAble() // releases its name: no live node can run boxed now
	eventually(t, 10*time.Second, "boxed paused once no live node can run it", func() bool {
		bs, err := readBreakers(context.Background(), w.st)
		b := bs["boxed"]
		return err == nil && b.State == policy.BreakerPaused && b.Kind == policy.KindConfigError && strings.Contains(b.Reason, noBwrap)
	})
}

// eventually polls cond until it holds or d has passed.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: not yet %s", d, what)
		}
	}
}
