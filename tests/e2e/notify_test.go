package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/notify"
)

// receiver is a local Slack and webhook endpoint that can be told to fail.
type receiver struct {
	srv     *httptest.Server
	failing atomic.Bool
	mu      sync.Mutex
	tries   map[string]int // path → requests
	got     map[string][]delivery
}

type delivery struct {
	body    []byte
	key     string
	ts, sig string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{tries: map[string]int{}, got: map[string][]delivery{}}
	r.failing.Store(true)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.tries[req.URL.Path]++
		if r.failing.Load() {
			http.Error(w, "receiver down", http.StatusInternalServerError)
			return
		}
		r.got[req.URL.Path] = append(r.got[req.URL.Path], delivery{b, req.Header.Get(notify.HeaderDelivery),
			req.Header.Get(notify.HeaderTimestamp), req.Header.Get(notify.HeaderSignature)})
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) counts(path string) (tries, delivered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tries[path], len(r.got[path])
}

// A give-up reaches a Slack receiver and a signed webhook exactly once each,
// although the receivers fail at first and drover serve is killed and
// restarted between the outbox write and the delivery.
func TestGiveUpNotifiedOnceAcrossAKillAndFailingReceivers(t *testing.T) {
	rcv := newReceiver(t)
	w := wf{Default: "sim", Policy: "  max_attempts: 1\n",
		Notify: "notify:\n  slack: {url: " + rcv.srv.URL + "/slack}\n  webhook: {url: " + rcv.srv.URL + "/hook, secret: s3cret}\n  allow_private: true\n"}
	e := newEnv(t, w, "", false)
	c := e.addCard("fails once and gives up", "--spec", `{"sim":["agent_failed"],"sim_delay":"10ms"}`)
	e.start()
	eventually(t, 20*time.Second, "the card to give up", func() bool { return e.card(c.Identifier).State == "blocked" })
	// Both channels were tried and refused: the outbox holds the messages.
	eventually(t, 20*time.Second, "a first, failed delivery on each channel", func() bool {
		s, _ := rcv.counts("/slack")
		h, _ := rcv.counts("/hook")
		return s >= 1 && h >= 1
	})
	e.kill(syscall.SIGKILL)
	rcv.failing.Store(false)
	e.start()
	eventually(t, 40*time.Second, "one delivery on each channel after the restart", func() bool {
		_, s := rcv.counts("/slack")
		_, h := rcv.counts("/hook")
		return s >= 1 && h >= 1
	})
	time.Sleep(3 * time.Second) // time for a duplicate to show up, were there one
	e.kill(syscall.SIGTERM)

	sTries, sGot := rcv.counts("/slack")
	hTries, hGot := rcv.counts("/hook")
	if sGot != 1 || hGot != 1 {
		t.Fatalf("delivered: slack %d, webhook %d; want exactly one each", sGot, hGot)
	}
	if sTries < 2 || hTries < 2 {
		t.Fatalf("tries: slack %d, webhook %d; the refused first delivery must have been retried", sTries, hTries)
	}
	rcv.mu.Lock()
	slack, hook := rcv.got["/slack"][0], rcv.got["/hook"][0]
	rcv.mu.Unlock()
	var sm map[string]any
	if err := json.Unmarshal(slack.body, &sm); err != nil || !strings.Contains(string(slack.body), c.Identifier) || sm["text"] == nil {
		t.Fatalf("slack message is not a Slack incoming-webhook body naming %s: %s", c.Identifier, slack.body)
	}
	if !notify.VerifySignature("s3cret", hook.ts, hook.body, hook.sig) {
		t.Fatalf("webhook signature does not verify: ts %q sig %q", hook.ts, hook.sig)
	}
	var hm map[string]any
	_ = json.Unmarshal(hook.body, &hm)
	if hm["event"] != "gave_up" || hm["idempotency_key"] == "" || hook.key == "" {
		t.Fatalf("webhook body = %s (key header %q)", hook.body, hook.key)
	}
}
