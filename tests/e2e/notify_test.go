package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/testkit"
)

// A give-up reaches a Slack receiver and a signed webhook exactly once each,
// although the receivers fail at first and drover serve is killed and
// restarted between the outbox write and the delivery.
func TestGiveUpNotifiedOnceAcrossAKillAndFailingReceivers(t *testing.T) {
	rcv := testkit.NewReceiver(t)
	rcv.SetStatus(http.StatusInternalServerError) // down until told otherwise
	w := wf{Default: "sim", Policy: "  max_attempts: 1\n",
		Notify: "slack: {url: " + rcv.URL + "/slack}\nwebhook: {url: " + rcv.URL + "/hook, secret: s3cret}\nallow_private: true\n"}
	e := newEnv(t, w, "", testkit.SQLite)
	c := e.addCard("fails once and gives up", "--spec", `{"sim":["agent_failed"],"sim_delay":"10ms"}`)
	e.start()
	eventually(t, 20*time.Second, "the card to give up", func() bool { return e.card(c.Identifier).State == "blocked" })
	// Both channels were tried and refused: the outbox holds the messages.
	eventually(t, 20*time.Second, "a first, failed delivery on each channel", func() bool {
		return len(rcv.Requests("/slack")) >= 1 && len(rcv.Requests("/hook")) >= 1
	})
	e.kill(syscall.SIGKILL)
	rcv.SetStatus(http.StatusOK)
	e.start()
	eventually(t, 40*time.Second, "one delivery on each channel after the restart", func() bool {
		return len(rcv.Delivered("/slack")) >= 1 && len(rcv.Delivered("/hook")) >= 1
	})
	time.Sleep(3 * time.Second) // time for a duplicate to show up, were there one
	e.kill(syscall.SIGTERM)

	sTries, sGot := len(rcv.Requests("/slack")), len(rcv.Delivered("/slack"))
	hTries, hGot := len(rcv.Requests("/hook")), len(rcv.Delivered("/hook"))
	if sGot != 1 || hGot != 1 {
		t.Fatalf("delivered: slack %d, webhook %d; want exactly one each", sGot, hGot)
	}
	if sTries < 2 || hTries < 2 {
		t.Fatalf("tries: slack %d, webhook %d; the refused first delivery must have been retried", sTries, hTries)
	}
	slack, hook := rcv.Delivered("/slack")[0], rcv.Delivered("/hook")[0]
	ts, sig := hook.Header.Get(notify.HeaderTimestamp), hook.Header.Get(notify.HeaderSignature)
	var sm map[string]any
	if err := json.Unmarshal(slack.Body, &sm); err != nil || !strings.Contains(string(slack.Body), c.Identifier) || sm["text"] == nil {
		t.Fatalf("slack message is not a Slack incoming-webhook body naming %s: %s", c.Identifier, slack.Body)
	}
	if !notify.VerifySignature("s3cret", ts, hook.Body, sig) {
		t.Fatalf("webhook signature does not verify: ts %q sig %q", ts, sig)
	}
	var hm map[string]any
	_ = json.Unmarshal(hook.Body, &hm)
	if hm["event"] != "gave_up" || hm["idempotency_key"] == "" || hook.Header.Get(notify.HeaderDelivery) == "" {
		t.Fatalf("webhook body = %s (key header %q)", hook.Body, hook.Header.Get(notify.HeaderDelivery))
	}
}
