package dispatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
	"github.com/drover-dev/drover/internal/tracker"
)

// toolsAgent records the tools its run was given and calls linear_graphql
// when it has it, as a codex app-server model would.
type toolsAgent struct {
	mu     sync.Mutex
	names  []string
	answer string
	err    error
}

func (a *toolsAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range inv.Tools {
		a.names = append(a.names, t.Name)
		if t.Name == LinearGraphQLTool {
			a.answer, a.err = t.Call(ctx, json.RawMessage(`{"query":"query Viewer { viewer { id } }","variables":{"who":"me"}}`))
		}
	}
	return agent.Result{Signals: policy.Signals{AgentKind: "codex", ExitCode: 0}}, nil
}

// TestLinearGraphQLOnlyOnLinearBoard: a run on drover's own board gets no
// extra tool; a run on a Linear board gets linear_graphql, and the agent's
// call reaches Linear with the board's key (which the agent never sees) and
// the agent's variables, its answer coming back.
func TestLinearGraphQLOnlyOnLinearBoard(t *testing.T) {
	ln := fake.New("eng")
	ln.APIKey = "lin_api_board_key"
	t.Cleanup(ln.Close)
	for _, kind := range []string{tracker.KindNative, tracker.KindGitHub, tracker.KindLinear} {
		t.Run(kind, func(t *testing.T) {
			ln.ResetLog()
			w := newWorld(t, 3)
			if kind != tracker.KindNative {
				w.cfg.Tracker.Kind, w.cfg.Tracker.Endpoint, w.cfg.Tracker.APIKey = kind, ln.URL, "lin_api_board_key"
			}
			ag := &toolsAgent{}
			d, err := New(Options{Store: w.st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
				NewAgent: func(agent.Profile) (agent.Agent, error) { return ag, nil }})
			if err != nil {
				t.Fatal(err)
			}
			stop := w.run(d)
			c := w.add("look at linear", "", "{}")
			w.waitFor(c.Identifier, "a finished run", func(c2 board.Card) bool { return c2.Claim == nil && len(w.runs(c2.ID)) > 0 })
			stop()
			ag.mu.Lock()
			defer ag.mu.Unlock()
			if kind != tracker.KindLinear {
				if len(ag.names) != 0 || len(ln.Log()) != 0 {
					t.Errorf("tools %v, Linear requests %v on a %s board", ag.names, ln.Log(), kind)
				}
				return
			}
			if strings.Join(ag.names, ",") != LinearGraphQLTool || ag.err != nil || !strings.Contains(ag.answer, "user-drover") {
				t.Fatalf("tools %v, answer %q, err %v", ag.names, ag.answer, ag.err)
			}
			log := ln.Log()
			if len(log) != 1 || log[0].Op != "Viewer" || log[0].Auth != "lin_api_board_key" || log[0].Vars["who"] != "me" {
				t.Errorf("Linear got %+v", log)
			}
		})
	}
}

// TestLinearGraphQLBadArguments: arguments that are not the tool's object
// fail the call before any request, saying the shape.
func TestLinearGraphQLBadArguments(t *testing.T) {
	ln := fake.New("eng")
	t.Cleanup(ln.Close)
	tools := runTools(tracker.Config{Kind: tracker.KindLinear, Endpoint: ln.URL, APIKey: "k"})
	if len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
	for _, args := range []string{`"query { viewer { id } }"`, `{"query": 3}`, `{}`} {
		if _, err := tools[0].Call(context.Background(), json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), "query") {
			t.Errorf("%s: error %v", args, err)
		}
	}
	if n := len(ln.Log()); n != 0 {
		t.Errorf("%d requests reached Linear", n)
	}
}
