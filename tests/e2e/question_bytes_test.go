package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// An agent's QUESTION: line may carry any bytes: invalid UTF-8, a NUL, a
// terminal escape. Each card still parks with its question on every backend
// (PostgreSQL once refused the invalid text and every tick failed after it),
// the bad bytes read back as U+FFFD, and no read command prints a raw
// control character to the operator's terminal.
func TestQuestionLineWithHostileBytes(t *testing.T) {
	for _, b := range testkit.Backends {
		t.Run(string(b), func(t *testing.T) {
			e := newEnv(t, wf{MaxConcurrent: 3}, `case "$DROVER_CARD_IDENTIFIER:$DROVER_ATTEMPT" in
DRV-1:1) printf 'x\nQUESTION: staging \377\376 or production?\n' ;;
DRV-2:1) printf 'x\nQUESTION: staging \000 or production?\n' ;;
DRV-3:1) printf 'x\nQUESTION: staging \033[2J\033]0;pwn\007 or production?\n' ;;
*) echo "done" ;;
esac
log_end`, b)
			cards := []string{e.addCard("invalid utf-8").Identifier, e.addCard("nul").Identifier, e.addCard("escape").Identifier}
			e.start()
			for _, id := range cards {
				eventually(t, 25*time.Second, id+" parks", func() bool { return e.card(id).State == "awaiting_input" })
			}
			for i, want := range []string{"staging \uFFFD or production?", "staging \uFFFD or production?"} {
				if rs := e.runs(cards[i]); len(rs) != 1 || rs[0].Kind != "input_required" || rs[0].Error != want {
					t.Errorf("runs of %s: %+v; want one input_required run asking %q", cards[i], rs, want)
				}
			}
			for _, args := range [][]string{{"status"}, {"card", "ls"}, {"card", "show", cards[2]}, {"runs", cards[2]}, {"events", "--card", cards[2]}} {
				if out := e.ok(args...); strings.ContainsAny(out, "\x1b\x07\x00") {
					t.Errorf("drover %v prints raw control characters: %q", args, out)
				}
			}
			e.ok("card", "answer", cards[0], "staging")
			eventually(t, 25*time.Second, cards[0]+" runs again after the answer", func() bool { return e.card(cards[0]).State == "review" })
		})
	}
}
