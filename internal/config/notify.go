package config

import (
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/suggest"
)

// Notify is where notifications go.
type Notify struct {
	Slack   Slack   `json:"slack"`
	Webhook Webhook `json:"webhook"`
	// AllowPrivate lets notification URLs resolve to private or loopback
	// addresses (off by default: the notifier refuses them).
	AllowPrivate bool `json:"allow_private"`
}

// Slack is an incoming-webhook target. An empty URL means off.
type Slack struct {
	URL    string   `json:"url"` // secret
	Events []string `json:"events"`
}

// Webhook is a generic signed HTTP POST target. An empty URL means off.
type Webhook struct {
	URL    string   `json:"url"`    // secret
	Secret string   `json:"secret"` // secret; HMAC key for the signature header
	Events []string `json:"events"` // empty: the default events (notify.DefaultEvents)
}

// NotifyEvents are the event names notify.*.events may list.
var NotifyEvents = []string{"blocked", "gave_up", "parked", "profile_paused", "profile_resumed", "succeeded", "done", "cancelled", "spend_paused", "config_error"}

// DefaultSlackEvents are sent to Slack when notify.slack.events is not given.
var DefaultSlackEvents = []string{"blocked", "gave_up", "parked", "profile_paused", "spend_paused", "config_error"}

func decodeNotify(d *decoder, n *yaml.Node) Notify {
	nt := Notify{Slack: Slack{Events: append([]string(nil), DefaultSlackEvents...)}}
	f := d.fields(n, "notify", []string{"slack", "webhook", "allow_private"}, strict)
	if v, ok := f["slack"]; ok {
		sf := d.fields(v, "notify.slack", []string{"url", "events"}, strict)
		nt.Slack.URL = notifyURL(d, sf["url"], "notify.slack.url")
		if e, ok := sf["events"]; ok {
			nt.Slack.Events = notifyEvents(d, e, "notify.slack.events")
		}
	}
	if v, ok := f["webhook"]; ok {
		wf := d.fields(v, "notify.webhook", []string{"url", "secret", "events"}, strict)
		nt.Webhook.URL = notifyURL(d, wf["url"], "notify.webhook.url")
		nt.Webhook.Secret = d.str(wf["secret"], "notify.webhook.secret", expandSecret)
		if e, ok := wf["events"]; ok {
			nt.Webhook.Events = notifyEvents(d, e, "notify.webhook.events")
		}
	}
	if v, ok := f["allow_private"]; ok {
		nt.AllowPrivate = d.boolean(v, "notify.allow_private")
	}
	return nt
}

func notifyURL(d *decoder, n *yaml.Node, path string) string {
	s := d.str(n, path, expandSecret)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// Never echo the value: it is a secret.
		d.errf(deref(n), path, "is not an http(s) URL; set it to the full https://… address")
		return ""
	}
	return s
}

func notifyEvents(d *decoder, n *yaml.Node, path string) []string {
	evs := d.strList(n, path, expandPlain)
	for i, e := range evs {
		if !contains(NotifyEvents, e) {
			d.errf(deref(n), fmt.Sprintf("%s[%d]", path, i), "%q is not an event%s; use any of %s", e, suggest.DidYouMean(suggest.Closest(e, NotifyEvents)), strings.Join(NotifyEvents, ", "))
		}
	}
	return evs
}
