package config

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Limits is the spend section. Zero means off.
type Limits struct {
	MaxCostPerDayUSD  float64 `json:"max_cost_per_day_usd"`
	MaxCostPerCardUSD float64 `json:"max_cost_per_card_usd"`
	// EstimatedCostPerRunUSD is what the day cap reserves for each run in
	// flight; 0 = the average of recent runs (see policy.NewDayBudget).
	EstimatedCostPerRunUSD float64 `json:"estimated_cost_per_run_usd"`
	// DayBoundary is when a spend day starts: "HH:MM" optionally followed by
	// an IANA zone name or UTC (default "00:00 UTC").
	DayBoundary string `json:"day_boundary"`

	dayOffset time.Duration
	dayLoc    *time.Location
}

// DayStart returns the start of the spend day that contains t.
func (l Limits) DayStart(t time.Time) time.Time {
	loc := l.dayLoc
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	start := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc).Add(l.dayOffset)
	if start.After(lt) {
		start = time.Date(lt.Year(), lt.Month(), lt.Day()-1, 0, 0, 0, 0, loc).Add(l.dayOffset)
	}
	return start
}

// NextDayStart returns the start of the spend day after the one that
// contains t (36 hours on lands inside it whatever a zone's clock change).
func (l Limits) NextDayStart(t time.Time) time.Time {
	return l.DayStart(l.DayStart(t).Add(36 * time.Hour))
}

// DefaultDayBoundary is when a spend day starts unless limits.day_boundary says.
const (
	DefaultDayBoundary = "00:00 UTC"
)

var dayBoundaryRe = regexp.MustCompile(`^([01]?\d|2[0-3]):([0-5]\d)(?:\s+(\S+))?$`)

func decodeLimits(d *decoder, n *yaml.Node) Limits {
	l := Limits{DayBoundary: DefaultDayBoundary, dayLoc: time.UTC}
	f := d.fields(n, "limits", []string{"max_cost_per_day_usd", "max_cost_per_card_usd", "estimated_cost_per_run_usd", "day_boundary"}, strict)
	for _, k := range []struct {
		key string
		dst *float64
	}{{"max_cost_per_day_usd", &l.MaxCostPerDayUSD}, {"max_cost_per_card_usd", &l.MaxCostPerCardUSD}, {"estimated_cost_per_run_usd", &l.EstimatedCostPerRunUSD}} {
		if v, ok := f[k.key]; ok {
			if x, ok := d.number(v, "limits."+k.key); ok {
				if x < 0 {
					zero := "no limit"
					if k.key == "estimated_cost_per_run_usd" {
						zero = "the average of recent runs"
					}
					d.errf(deref(v), "limits."+k.key, "%v is negative; use 0 for %s or a positive amount in USD", x, zero)
				}
				*k.dst = x
			}
		}
	}
	if v, ok := f["day_boundary"]; ok {
		l.DayBoundary = strings.TrimSpace(d.str(v, "limits.day_boundary", expandPlain))
		m := dayBoundaryRe.FindStringSubmatch(l.DayBoundary)
		if m == nil {
			d.errf(deref(v), "limits.day_boundary", "%q is not a time of day; write HH:MM with an optional zone, e.g. \"00:00 UTC\" or \"06:00 Europe/Berlin\"", l.DayBoundary)
			return l
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		l.dayOffset = time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
		if m[3] != "" {
			loc, err := time.LoadLocation(m[3])
			if err != nil {
				d.errf(deref(v), "limits.day_boundary", "zone %q is unknown; use UTC or an IANA name such as America/New_York", m[3])
			} else {
				l.dayLoc = loc
			}
		}
	}
	return l
}
