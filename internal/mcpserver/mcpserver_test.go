package mcpserver

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// connect claims a fresh card on a SQLite store, serves its run over an
// in-memory transport and returns an MCP client session on it, as an
// agent's MCP client would hold one.
func connect(t *testing.T) (*mcp.ClientSession, store.Store, board.Card, board.Run) {
	t.Helper()
	ctx := context.Background()
	st := testkit.Store(t, testkit.SQLite)
	c, err := st.CreateCard(ctx, "DRV", board.Card{Title: "pay by card", Body: "use /v2/pay", State: "ready"}, "operator")
	if err != nil {
		t.Fatal(err)
	}
	c, r := testkit.Claim(t, st, c, "n1", "claude")
	st1, st2 := mcp.NewInMemoryTransports()
	ss, err := New(&agentcall.Service{Store: st, RunID: r.ID}, "test").Connect(ctx, st1, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, st, c, r
}

// call calls a tool and returns its text and whether it was a tool error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// The agent sees drover's six tools, the instructions, and its card.
func TestToolsAndCard(t *testing.T) {
	cs, _, c, r := connect(t)
	ctx := context.Background()
	if got := cs.InitializeResult().Instructions; got != Instructions {
		t.Errorf("instructions %q, want the package's", got)
	}
	lt, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	sort.Strings(names)
	if got, want := strings.Join(names, ","), "drover_ask_human,drover_block,drover_card,drover_comment,drover_done,drover_progress"; got != want {
		t.Errorf("tools %s, want %s", got, want)
	}
	text, isErr := call(t, cs, "drover_card", map[string]any{})
	var card agentcall.Card
	if isErr || json.Unmarshal([]byte(text), &card) != nil {
		t.Fatalf("drover_card: error %v, text %q; want the card as JSON", isErr, text)
	}
	if card.Identifier != c.Identifier || card.Body != "use /v2/pay" || card.Run.ID != r.ID {
		t.Errorf("drover_card gave %+v, want card %s with its body and run %s", card, c.Identifier, r.ID)
	}
}

// A block is stored on the run with the agent's words; a second report and
// a call with a missing argument are tool errors that say why and change
// nothing.
func TestBlockOnceThenRefused(t *testing.T) {
	cs, st, c, r := connect(t)
	ctx := context.Background()
	text, isErr := call(t, cs, "drover_block", map[string]any{"what": "the spec names /v1/pay, gone", "where": "spec.endpoint", "how": "pick /v2/pay"})
	if isErr || !strings.Contains(text, "stop now") {
		t.Fatalf("drover_block: error %v, text %q; want the report and the word to stop", isErr, text)
	}
	got, err := st.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Report == nil || got.Report.Kind != board.ReportBlock || got.Report.Where != "spec.endpoint" || got.Report.How != "pick /v2/pay" {
		t.Fatalf("run's report %+v, want the block with the agent's where and how", got.Report)
	}
	text, isErr = call(t, cs, "drover_done", map[string]any{"summary": "did it anyway"})
	if !isErr || !strings.Contains(text, "reported already") {
		t.Errorf("drover_done after a block: error %v, text %q; want a tool error saying the run reported already", isErr, text)
	}
	text, isErr = call(t, cs, "drover_comment", map[string]any{"text": ""})
	if !isErr || !strings.Contains(text, "text") {
		t.Errorf("empty comment: error %v, text %q; want a tool error naming text", isErr, text)
	}
	if got, _ := st.GetRun(ctx, r.ID); got.Report == nil || got.Report.Kind != board.ReportBlock {
		t.Errorf("run's report after the refusals %+v, want the block unchanged", got.Report)
	}
	if cms, _ := st.ListComments(ctx, c.ID); len(cms) != 0 {
		t.Errorf("%d comments after a refused one, want none", len(cms))
	}
}
