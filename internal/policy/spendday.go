package policy

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// DayBoundary is when a spend day starts (limits.day_boundary): "HH:MM",
// optionally followed by an IANA zone name or UTC. The zero value is
// midnight UTC.
type DayBoundary struct {
	text   string
	offset time.Duration
	loc    *time.Location
}

// UnmarshalText reads a boundary as WORKFLOW.md writes it.
func (b *DayBoundary) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	f := strings.Fields(s + " UTC") // HH:MM, the zone, UTC
	at, err := time.Parse("15:04", f[0])
	if err != nil || len(f) > 3 {
		return fmt.Errorf("%q is not a time of day; write HH:MM with an optional zone, e.g. \"00:00 UTC\" or \"06:00 Europe/Berlin\"", s)
	}
	loc, err := time.LoadLocation(f[1])
	if err != nil {
		return fmt.Errorf("zone %q is unknown; use UTC or an IANA name such as America/New_York", f[1])
	}
	*b = DayBoundary{text: s, offset: time.Duration(at.Hour())*time.Hour + time.Duration(at.Minute())*time.Minute, loc: loc}
	return nil
}

// MarshalText writes the boundary as WORKFLOW.md gave it.
func (b DayBoundary) MarshalText() ([]byte, error) { return []byte(cmp.Or(b.text, "00:00 UTC")), nil }

// Start returns the start of the spend day that contains t.
func (b DayBoundary) Start(t time.Time) time.Time {
	loc := cmp.Or(b.loc, time.UTC)
	lt := t.In(loc)
	start := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc).Add(b.offset)
	if start.After(lt) {
		start = time.Date(lt.Year(), lt.Month(), lt.Day()-1, 0, 0, 0, 0, loc).Add(b.offset)
	}
	return start
}

// Next returns the start of the spend day after the one that contains t
// (36 hours on lands inside it whatever a zone's clock change).
func (b DayBoundary) Next(t time.Time) time.Time { return b.Start(b.Start(t).Add(36 * time.Hour)) }
