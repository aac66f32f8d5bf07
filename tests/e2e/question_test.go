package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// A command agent that cannot go on ends its final message with drover's
// QUESTION: line: the card parks with that question, shown by drover status;
// the same question asked in prose is a success (drover does not guess at
// prose); the answer makes the card eligible and the next attempt runs.
func TestQuestionLineParksACommandAgent(t *testing.T) {
	e := newEnv(t, wf{MaxConcurrent: 2}, `case "$DROVER_CARD_IDENTIFIER:$DROVER_ATTEMPT" in
DRV-1:1) printf 'I read the deploy scripts.\nQUESTION: Deploy to staging or production?\n' ;;
DRV-2:*) printf 'Should I deploy to staging or production?\n' ;;
*) echo "deployed" ;;
esac
log_end`, testkit.SQLite)
	asks := e.addCard("asks by the protocol")
	prose := e.addCard("asks in prose")
	e.start()
	eventually(t, 20*time.Second, asks.Identifier+" parks", func() bool { return e.card(asks.Identifier).State == "awaiting_input" })
	eventually(t, 20*time.Second, prose.Identifier+" finishes", func() bool { return e.card(prose.Identifier).State == "review" })

	rs := e.runs(asks.Identifier)
	if len(rs) != 1 || rs[0].Kind != "input_required" || rs[0].Counted {
		t.Fatalf("runs of %s: %+v; want one uncounted input_required run", asks.Identifier, rs)
	}
	var st struct {
		Parked []struct {
			Identifier string `json:"identifier"`
			Question   string `json:"question"`
		} `json:"parked"`
	}
	e.jsonOf(&st, "status")
	if len(st.Parked) != 1 || st.Parked[0].Identifier != asks.Identifier || st.Parked[0].Question != "Deploy to staging or production?" {
		t.Errorf("drover status parked %+v; want %s asking exactly the QUESTION: line's question", st.Parked, asks.Identifier)
	}
	if k := e.runs(prose.Identifier)[0].Kind; k != "succeeded" {
		t.Errorf("a question in prose came out %s; want succeeded", k)
	}

	e.ok("card", "answer", asks.Identifier, "staging")
	eventually(t, 20*time.Second, asks.Identifier+" runs again after the answer", func() bool { return e.card(asks.Identifier).State == "review" })
	if n := len(e.runs(asks.Identifier)); n != 2 {
		t.Errorf("%s has %d runs; want the parked one and the answered one", asks.Identifier, n)
	}
	if !strings.Contains(e.card(asks.Identifier).StateReason, "attempt 2 succeeded") {
		t.Errorf("state reason %q", e.card(asks.Identifier).StateReason)
	}
}
