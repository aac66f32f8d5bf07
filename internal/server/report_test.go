package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// A reason that came from the agent itself is marked as such on the card
// page and the board; one drover wrote is not.
func TestDashboardMarksTheAgentsOwnReason(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	mk := func(title, kind string) board.Card {
		c, err := h.w.Store.CreateCard(ctx, "DRV", board.Card{Title: title, State: "blocked", Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage(`{}`),
			BlockReason: &board.BlockReason{Kind: kind, What: "the endpoint /v2/pay does not exist", Where: "spec.endpoint", How: "name one"}}, "operator")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	agent := mk("agent said", "agent_blocked")
	drover := mk("drover said", "invalid_input")
	run := board.Run{ID: board.NewID(), CardID: agent.ID, Attempt: 1, Agent: "claude"}
	if err := h.w.Store.Apply(ctx, store.Change{NewRun: &run}); err != nil {
		t.Fatal(err)
	}
	rep := &board.AgentReport{Kind: board.ReportBlock, What: "the endpoint /v2/pay does not exist", Where: "spec.endpoint", How: "name one"}
	if err := h.w.Store.Apply(ctx, store.Change{AgentCall: &store.AgentCall{RunID: run.ID, CardID: agent.ID, Report: rep}}); err != nil {
		t.Fatal(err)
	}
	body := string(h.want(h.do("GET", "/cards/"+agent.Identifier, nil), 200).Body)
	if !strings.Contains(body, "reported by the agent") {
		t.Errorf("the card page of an agent_blocked card does not mark the reason as the agent's")
	}
	if !strings.Contains(body, "agent: block</span> the endpoint /v2/pay does not exist") {
		t.Errorf("the card page's runs do not show the agent's report")
	}
	if body := string(h.want(h.do("GET", "/cards/"+drover.Identifier, nil), 200).Body); strings.Contains(body, "reported by the agent") {
		t.Errorf("drover's own block reason is marked as the agent's")
	}
	if body := string(h.want(h.do("GET", "/", nil), 200).Body); !strings.Contains(body, "reported by the agent") {
		t.Errorf("the board does not mark the agent's reason")
	}
}
