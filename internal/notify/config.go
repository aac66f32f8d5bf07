package notify

import (
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/suggest"
)

// Config is WORKFLOW.md's notify: section, where notifications go; the
// config package decodes it by these yaml tags (cfg:"secret": masked by
// config.Redacted).
type Config struct {
	Slack   Slack   `json:"slack" yaml:"slack"`
	Webhook Webhook `json:"webhook" yaml:"webhook"`
	// AllowPrivate lets notification URLs resolve to private or loopback
	// addresses (off by default: CheckConfig refuses them).
	AllowPrivate bool `json:"allow_private" yaml:"allow_private"`
}

// Slack is an incoming-webhook target. An empty URL means off.
type Slack struct {
	URL    string   `json:"url" yaml:"url" cfg:"secret"`
	Events []string `json:"events" yaml:"events"`
}

// Webhook is a generic signed HTTP POST target. An empty URL means off.
type Webhook struct {
	URL    string   `json:"url" yaml:"url" cfg:"secret"`
	Secret string   `json:"secret" yaml:"secret" cfg:"secret"` // HMAC key for the signature header
	Events []string `json:"events" yaml:"events"`              // empty: DefaultEvents
}

// Events are the event names notify.*.events may list.
var Events = []string{EventBlocked, EventGaveUp, EventParked, EventProfilePaused, EventProfileResumed, EventSucceeded, EventDone, EventCancelled, EventSpendPaused, EventConfigError}

// Check is the load-time check of the section, each error "KEY: message"
// under notify.: a URL that is not http(s) (cleared, and never echoed: it
// is a secret) and an event name that is not one of Events.
func (c *Config) Check() error {
	var errs []error
	for _, ch := range []struct {
		key    string
		url    *string
		events []string
	}{{"slack", &c.Slack.URL, c.Slack.Events}, {"webhook", &c.Webhook.URL, c.Webhook.Events}} {
		if u, err := neturl.Parse(*ch.url); *ch.url != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
			errs = append(errs, fmt.Errorf("%s.url: is not an http(s) URL; set it to the full https://… address", ch.key))
			*ch.url = ""
		}
		for i, e := range ch.events {
			if !slices.Contains(Events, e) {
				errs = append(errs, fmt.Errorf("%s.events[%d]: %q is not an event%s; use one of %s", ch.key, i, e, suggest.DidYouMean(suggest.Closest(e, Events)), strings.Join(Events, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}
