package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/server"
)

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// A tracker webhook wakes the sync only with the provider's signature over
// the body; drover's own token is not asked for (the provider has none).
func TestTrackerWebhooks(t *testing.T) {
	for _, kind := range []string{"github", "linear"} {
		t.Run(kind, func(t *testing.T) {
			var woke atomic.Int32
			h := newHarness(t, func(o *server.Options) {
				o.AuthToken = "drover-token"
				o.Webhook = &server.Webhook{Kind: kind, Secret: func() string { return "hook-secret" }, Wake: func() { woke.Add(1) }}
			})
			h.token = "" // GitHub and Linear do not send drover's token
			body := fmt.Sprintf(`{"action":"closed","webhookTimestamp":%d}`, time.Now().UnixMilli())
			header, good := "X-Hub-Signature-256", "sha256="+sign("hook-secret", body)
			if kind == "linear" {
				header, good = "Linear-Signature", sign("hook-secret", body)
			}
			for _, c := range []struct {
				name, sig string
				status    int
				code      string
			}{
				{"missing", "", http.StatusUnauthorized, "bad_signature"},
				{"wrong secret", "sha256=" + sign("other", body), http.StatusUnauthorized, "bad_signature"},
				{"good", good, http.StatusAccepted, ""},
			} {
				r := h.do("POST", "/api/v1/webhooks/"+kind, body, header, c.sig)
				if r.StatusCode != c.status || c.code != "" && r.errCode(t) != c.code {
					t.Errorf("%s signature: %d %s, want %d %s", c.name, r.StatusCode, r.Body, c.status, c.code)
				}
			}
			if woke.Load() != 1 {
				t.Errorf("woke %d times, want once (the good delivery)", woke.Load())
			}
			other := map[string]string{"github": "linear", "linear": "github"}[kind]
			if r := h.do("POST", "/api/v1/webhooks/"+other, body, header, good); r.StatusCode != http.StatusNotFound {
				t.Errorf("the other tracker's webhook: %d, want 404", r.StatusCode)
			}
			if kind == "linear" {
				stale := fmt.Sprintf(`{"webhookTimestamp":%d}`, time.Now().Add(-time.Hour).UnixMilli())
				if r := h.do("POST", "/api/v1/webhooks/linear", stale, header, sign("hook-secret", stale)); r.StatusCode != http.StatusUnauthorized || r.errCode(t) != "stale_webhook" {
					t.Errorf("a replayed delivery: %d %s", r.StatusCode, r.Body)
				}
			}
		})
	}
}

// Without a secret the webhook is off and says which key turns it on.
func TestTrackerWebhookOff(t *testing.T) {
	h := newHarness(t, func(o *server.Options) {
		o.Webhook = &server.Webhook{Kind: "github", Secret: func() string { return "" }}
	})
	if r := h.do("POST", "/api/v1/webhooks/github", `{}`, "X-Hub-Signature-256", "sha256=00"); r.StatusCode != http.StatusServiceUnavailable || r.errCode(t) != "webhook_off" {
		t.Fatalf("%d %s", r.StatusCode, r.Body)
	}
}
