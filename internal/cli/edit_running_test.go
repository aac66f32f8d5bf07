package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// card edit --spec of a running card exits 2 naming the field and the way
// on (cancel, edit, resume); the card keeps its spec (issue 13, item 8).
func TestEditSpecOfRunningCardRefused(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "busy", "--spec", `{"plan":"a"}`)
	st := testkit.Open(t, e.dsn)
	ctx := context.Background()
	c, err := st.GetCard(ctx, "DRV-1")
	if err != nil {
		t.Fatal(err)
	}
	c.Claim = &board.Claim{Owner: "node-a", Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	if err := st.Apply(ctx, store.Change{Card: &c}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	msg := e.fails(2, "card", "edit", "DRV-1", "--spec", `{"plan":"b"}`)
	if !strings.Contains(msg, "spec") || !strings.Contains(msg, "drover card cancel DRV-1") {
		t.Fatalf("refusal = %q", msg)
	}
	var got cardJSON
	e.okJSON(&got, "card", "show", "DRV-1")
	if !strings.Contains(string(got.Spec), `"a"`) {
		t.Fatalf("spec changed under the run: %s", got.Spec)
	}
}
