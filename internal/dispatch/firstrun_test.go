package dispatch

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// commentReads counts the ListComments calls made through it.
type commentReads struct {
	store.Store
	n atomic.Int64
}

func (c *commentReads) ListComments(ctx context.Context, cardID string) ([]board.Comment, error) {
	c.n.Add(1)
	return c.Store.ListComments(ctx, cardID)
}

// firstRunPrompt runs one card with an operator's comment to review under
// the prompt template tmpl and returns the prompt its run got and how many
// times the dispatcher read the card's comments.
func firstRunPrompt(t *testing.T, tmpl string) (string, int64) {
	w := newWorldFrom(t, worldWorkflow(1).Prompt(tmpl))
	reads := &commentReads{Store: w.st}
	w.st = reads
	c := w.add("Tidy the docs", "", `{"sim": ["succeeded"], "sim_delay": "0s", "sim_record_input": true}`)
	if _, err := w.ops.Comment(context.Background(), c.ID, "mind the changelog"); err != nil {
		t.Fatal(err)
	}
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.ID, "review", inState("review"))
	rs := w.runs(c.ID)
	if len(rs) != 1 {
		t.Fatalf("runs = %s", attempts(rs))
	}
	return simInput(t, rs[0]).Prompt, reads.n.Load()
}

// A first run whose template shows comments gets them; one whose template
// cannot show them gets the same prompt without the dispatcher reading them.
func TestFirstRunReadsCommentsOnlyForATemplateThatShowsThem(t *testing.T) {
	p, n := firstRunPrompt(t, "{{ card.title }}{% for c in comments %} / {{ c.text }}{% endfor %}")
	if p != "Tidy the docs / mind the changelog\n" || n == 0 {
		t.Fatalf("with comments in the template: prompt %q after %d comment reads", p, n)
	}
	p, n = firstRunPrompt(t, "{{ card.title }}")
	if p != "Tidy the docs\n" || n != 0 {
		t.Fatalf("without comments in the template: prompt %q after %d comment reads", p, n)
	}
	if strings.Contains(p, "changelog") {
		t.Fatal("a template without comments showed one")
	}
}
