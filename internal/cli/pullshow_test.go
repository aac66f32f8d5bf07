package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// drover card show carries a card's pull request: its JSON has
// pull_request as the store holds it, its text a pull: line with the
// number, state, branch, failing checks and the address; a card without
// one shows neither.
func TestCardShowPullRequest(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "With a PR")
	e.ok("card", "add", "--title", "Without")
	st, err := sqlstore.Open(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetCard(context.Background(), "DRV-1")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	c.PullRequest = &board.PullRequest{Number: 12, URL: "https://github.com/acme/app/pull/12", Branch: "drover/drv-1-with-a-pr",
		State: board.PullOpen, HeadSHA: "0123456789abcdef", CheckedAt: &at, Handled: board.PullHandled{Checks: []int64{5}}}
	if err := st.Apply(context.Background(), store.Change{Card: &c}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var got struct {
		PullRequest *board.PullRequest `json:"pull_request"`
	}
	e.okJSON(&got, "card", "show", "DRV-1")
	if got.PullRequest == nil || got.PullRequest.Number != 12 || got.PullRequest.Branch != "drover/drv-1-with-a-pr" {
		t.Fatalf("card show --json pull_request = %+v", got.PullRequest)
	}
	out := e.ok("card", "show", "DRV-1")
	want := "pull:        #12 open, branch drover/drv-1-with-a-pr at 0123456789ab, 1 check failing, read " +
		at.Local().Format("2006-01-02 15:04:05") + " (https://github.com/acme/app/pull/12)"
	if !strings.Contains(out, want) {
		t.Fatalf("card show lacks %q:\n%s", want, out)
	}
	var raw map[string]json.RawMessage
	e.okJSON(&raw, "card", "show", "DRV-2")
	if string(raw["pull_request"]) != "null" || strings.Contains(e.ok("card", "show", "DRV-2"), "pull:") {
		t.Fatalf("a card without a pull request shows one: %s", raw["pull_request"])
	}
}
