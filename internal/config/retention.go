package config

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Retention is how long drover keeps history (see docs/reliability.md,
// "A store that lives for years"). Zero keeps that kind forever. What
// retention never removes: an open run, the latest run of a card and its
// log, and a notification not yet delivered.
type Retention struct {
	// Events is how long events are kept, and delivered or dead
	// notifications with them.
	Events time.Duration `json:"events"`
	// Runs is how long finished runs are kept (their logs go with them).
	Runs time.Duration `json:"runs"`
	// Logs is how long run log files are kept; the run rows stay.
	Logs time.Duration `json:"logs"`
}

// Day is the unit retention periods are usually written in ("90d").
const Day = 24 * time.Hour

// Retention defaults: three months of events, six of runs, one of logs.
const (
	DefaultRetainEvents = 90 * Day
	DefaultRetainRuns   = 180 * Day
	DefaultRetainLogs   = 30 * Day
)

// minRetention is the shortest period accepted: shorter ones are more
// likely a slip ("90s" for "90d") than a wish to forget within minutes.
const minRetention = time.Hour

func decodeRetention(d *decoder, n *yaml.Node) Retention {
	r := Retention{Events: DefaultRetainEvents, Runs: DefaultRetainRuns, Logs: DefaultRetainLogs}
	f := d.fields(n, "retention", []string{"events", "runs", "logs"}, strict)
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"events", &r.Events}, {"runs", &r.Runs}, {"logs", &r.Logs}} {
		v, ok := f[k.key]
		if !ok {
			continue
		}
		path := "retention." + k.key
		s, ok := d.scalar(v, path, `a period such as "90d"`)
		if !ok {
			continue
		}
		p, err := parseRetention(s.Value)
		if err != "" {
			d.errf(s, path, "%q %s; write days (90d), a Go duration (720h), or 0 / forever to keep everything", s.Value, err)
			continue
		}
		*k.dst = p
	}
	return r
}

// parseRetention reads "90d", "720h", "0" or "forever"; the error is a
// phrase for the message, "" when s is fine.
func parseRetention(s string) (time.Duration, string) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "0", "forever":
		return 0, ""
	}
	var v time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return 0, "is not a number of days"
		}
		v = time.Duration(n * float64(Day))
	} else {
		var err error
		if v, err = time.ParseDuration(s); err != nil {
			return 0, "is not a period"
		}
	}
	switch {
	case v < 0:
		return 0, "is negative"
	case v == 0:
		return 0, ""
	case v < minRetention:
		return 0, "is shorter than an hour (a slip for days?)"
	}
	return v, ""
}

// MarshalJSON writes the periods as strings ("90d", "forever").
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"events": RetentionString(r.Events), "runs": RetentionString(r.Runs), "logs": RetentionString(r.Logs)})
}

// RetentionString writes a retention period as WORKFLOW.md would: whole
// days as "90d", 0 as "forever", anything else as a Go duration.
func RetentionString(d time.Duration) string {
	switch {
	case d == 0:
		return "forever"
	case d%Day == 0:
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	}
	return d.String()
}
