package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// Webhook is an external tracker's inbound webhook: a request whose
// signature verifies with Secret wakes the tracker's sync (Wake).
type Webhook struct {
	Kind   string        // github or linear: the path's last segment
	Secret func() string // tracker.webhook_secret now ("" = off)
	Wake   func()
}

// PullWebhook is the repository's webhook for pull requests: a request
// whose X-Hub-Signature-256 verifies with Secret is handed to Event with
// its X-GitHub-Event type (the caller reads which pull requests it names).
type PullWebhook struct {
	Secret func() string // workspace.git.pull_request.webhook_secret now ("" = off)
	Event  func(eventType string, body []byte)
}

// postPullWebhook serves POST /api/v1/webhooks/pulls.
func (s *Server) postPullWebhook(w http.ResponseWriter, r *http.Request) {
	wh := s.opts.PullWebhook
	if wh == nil {
		writeError(w, http.StatusNotFound, "route_not_found", "no pull request webhook here: workspace.git.pull_request is not set")
		return
	}
	secret := wh.Secret()
	if secret == "" {
		writeError(w, http.StatusServiceUnavailable, "webhook_off", "workspace.git.pull_request.webhook_secret is not set; set it to the secret the repository's webhook signs with")
		return
	}
	body, ok := signedBody(w, r, secret, "workspace.git.pull_request.webhook_secret", "X-Hub-Signature-256", "sha256=")
	if !ok {
		return
	}
	if wh.Event != nil {
		wh.Event(r.Header.Get("X-GitHub-Event"), body)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"ok": true})
}

// linearReplayWindow is how far a Linear delivery's webhookTimestamp may be
// from now (Linear's documentation suggests a minute).
const linearReplayWindow = time.Minute

// postWebhook verifies the provider's signature over the raw body and
// wakes the sync: GitHub signs with X-Hub-Signature-256 ("sha256=" + hex
// HMAC-SHA256), Linear with Linear-Signature (hex HMAC-SHA256) and a
// webhookTimestamp in the body. A missing or wrong signature is refused;
// the body is not otherwise read (the sync reads the tracker itself).
func (s *Server) postWebhook(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	if kind == "pulls" {
		s.postPullWebhook(w, r)
		return
	}
	wh := s.opts.Webhook
	if wh == nil || wh.Kind != kind {
		writeError(w, http.StatusNotFound, "route_not_found", "no "+kind+" webhook here: tracker.kind is not "+kind)
		return
	}
	secret := wh.Secret()
	if secret == "" {
		writeError(w, http.StatusServiceUnavailable, "webhook_off", "tracker.webhook_secret is not set; set it to the secret the "+kind+" webhook signs with")
		return
	}
	header, prefix := "X-Hub-Signature-256", "sha256="
	if kind == "linear" {
		header, prefix = "Linear-Signature", ""
	}
	body, ok := signedBody(w, r, secret, "tracker.webhook_secret", header, prefix)
	if !ok {
		return
	}
	if kind == "linear" {
		var p struct {
			WebhookTimestamp int64 `json:"webhookTimestamp"`
		}
		if json.Unmarshal(body, &p) == nil && p.WebhookTimestamp > 0 {
			if d := s.opts.Now().Sub(time.UnixMilli(p.WebhookTimestamp)); d > linearReplayWindow || d < -linearReplayWindow {
				writeError(w, http.StatusUnauthorized, "stale_webhook", "webhookTimestamp is more than a minute from now; a replayed delivery is refused")
				return
			}
		}
	}
	if wh.Wake != nil {
		wh.Wake()
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"ok": true})
}

// signedBody reads r's body and checks the hex HMAC-SHA256 of it, sent in
// header after prefix, against secret (named secretKey in the errors). A
// false answer has been written to w.
func signedBody(w http.ResponseWriter, r *http.Request, secret, secretKey, header, prefix string) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the webhook body is too large")
		return nil, false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	got, _ := strings.CutPrefix(r.Header.Get(header), prefix)
	if got == "" {
		writeError(w, http.StatusUnauthorized, "bad_signature", header+" is missing; the webhook must be signed with "+secretKey)
		return nil, false
	}
	if !hmac.Equal([]byte(strings.ToLower(got)), []byte(want)) {
		writeError(w, http.StatusUnauthorized, "bad_signature", header+" does not match the body signed with "+secretKey)
		return nil, false
	}
	return body, true
}
