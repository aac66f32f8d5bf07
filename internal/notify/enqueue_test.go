package notify_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestEnqueueFollowsEachChannelsEvents(t *testing.T) {
	cfg := notify.Config{
		Slack:   notify.Slack{URL: "https://hooks.slack.example/x", Events: []string{"blocked", "gave_up"}},
		Webhook: notify.Webhook{URL: "https://hooks.example/y"}, // empty list: the defaults
	}
	at := time.Now()
	card := notify.CardOf(board.Card{ID: "c1", Identifier: "DRV-1"}, "")
	for _, tc := range []struct {
		event string
		want  []string
	}{
		{"gave_up", []string{"slack", "webhook"}},
		{"blocked", []string{"slack", "webhook"}},
		{"parked", []string{"webhook"}},
		{"profile_paused", []string{"webhook"}},
		{"spend_cap", []string{"webhook"}}, // alias of spend_paused
		{"config_error", []string{"webhook"}},
		{"succeeded", nil}, // opt-in only
		{"retry", nil},     // transient retries are never notified
		{"retry_scheduled", nil},
		{"deferred", nil},
	} {
		items := notify.Enqueue(cfg, notify.Message{Event: tc.event, Key: "c1/r1/" + tc.event, At: at, Card: card})
		var got []string
		for _, it := range items {
			got = append(got, it.Channel)
			if it.Key != "c1/r1/"+tc.event+"/"+it.Channel || it.CardID != "c1" || it.Event != notify.Canonical(tc.event) {
				t.Errorf("%s: row %+v", tc.event, it)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s went to %v, want %v", tc.event, got, tc.want)
		}
	}
	// An opted-in event goes out; an unconfigured channel gets nothing.
	cfg.Webhook.Events = []string{"succeeded"}
	cfg.Slack.URL = ""
	if items := notify.Enqueue(cfg, notify.Message{Event: "succeeded", Card: card}); len(items) != 1 || items[0].Channel != "webhook" {
		t.Errorf("succeeded with opt-in: %+v", items)
	}
}

func TestEnqueueFillsKeyAndText(t *testing.T) {
	cfg := notify.Config{Webhook: notify.Webhook{URL: "https://hooks.example/y"}}
	m := gaveUp(time.Now())
	m.Key, m.Text = "", ""
	items := notify.Enqueue(cfg, m)
	if len(items) != 1 || items[0].Key != "c7/r3/gave_up/webhook" || items[0].RunID != "r3" {
		t.Fatalf("rows %+v", items)
	}
	if !strings.Contains(string(items[0].Payload), `"text":"DRV-7 \"Fix the login page\" gave up after 10 attempts: agent_failed"`) {
		t.Errorf("payload %s", items[0].Payload)
	}
}

func TestPrivateURLRefusedWithoutAllowPrivate(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.0.1:9/hook", "http://localhost/hook", "https://10.1.2.3/x", "http://192.168.0.10/",
		"http://169.254.169.254/latest/meta-data", "http://[::1]:80/", "http://[fd00::1]/", "http://0.0.0.0/", "http://100.64.0.1/",
	} {
		err := notify.CheckURL(raw, false)
		var ue *notify.URLError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "notify.webhook.url") || !strings.Contains(err.Error(), "notify.allow_private: true") {
			t.Errorf("CheckURL(%s) = %v; want a refusal naming the key and the fix", raw, err)
		}
		if err := notify.CheckURL(raw, true); err != nil {
			t.Errorf("CheckURL(%s, allowPrivate) = %v", raw, err)
		}
	}
	for _, raw := range []string{"ftp://example.com/x", "file:///etc/passwd", "example.com/x"} {
		if err := notify.CheckURL(raw, true); err == nil || !strings.Contains(err.Error(), "notify.webhook.url") {
			t.Errorf("CheckURL(%s) = %v; want a refusal", raw, err)
		}
	}
	if err := notify.CheckURL("https://93.184.215.14/hook", false); err != nil {
		t.Errorf("a public literal IP is refused: %v", err)
	}
	err := notify.CheckConfig(notify.Config{Slack: notify.Slack{URL: "http://127.0.0.1/s"}})
	if err == nil || !strings.Contains(err.Error(), "notify.slack.url") {
		t.Errorf("CheckConfig names the slack key: %v", err)
	}
}

func TestDeliveryRefusesPrivateAddressAtConnectTime(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	hook := testkit.NewReceiver(t)
	cfg := notifyConfig("", hook.URL)
	cfg.AllowPrivate = false // the receiver listens on 127.0.0.1
	clk := testkit.NewClock(time.Now())
	enqueue(t, st, cfg, gaveUp(clk.Now()))
	if d, f := tick(t, newWorker(st, cfg, clk)); d != 0 || f != 1 {
		t.Fatalf("delivered %d, failed %d; want the private receiver refused", d, f)
	}
	if n := len(hook.Requests("")); n != 0 {
		t.Fatalf("the private receiver got %d requests", n)
	}
	row := outboxRow(t, st)
	if !strings.Contains(row.LastError, "loopback") || !strings.Contains(row.LastError, "notify.allow_private: true") || strings.Contains(row.LastError, hook.URL) {
		t.Errorf("last_error %q", row.LastError)
	}
	if row.Dead || row.NextAt.Before(clk.Now().Add(5*time.Second)) {
		t.Errorf("refused row should back off, not die: %+v", row)
	}
}
