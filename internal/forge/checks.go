package forge

import "slices"

// What the check runs of a head commit say, as Checks decides it.
const (
	ChecksNone    = "none"    // nothing decides: no check runs and none required
	ChecksPending = "pending" // a deciding check is queued, running or not reported yet
	ChecksFailing = "failing" // a deciding check completed and did not pass
	ChecksPassing = "passing" // every deciding check completed and passed
)

// ChecksVerdict is what the check runs of a head commit say.
type ChecksVerdict struct {
	State   string   `json:"state"`
	Failed  []Check  `json:"failed,omitempty"`  // deciding checks that failed
	Pending []Check  `json:"pending,omitempty"` // deciding checks not completed
	Missing []string `json:"missing,omitempty"` // required checks not reported on the commit
}

// Checks decides which check runs count and what they say. required is
// Config.RequiredChecks: when empty every check run decides; otherwise
// only those named (by exact name), and a named check that has not been
// reported is pending (it may not have started yet). A check run reported
// more than once (a re-run) counts by its newest run (the highest ID, or
// the later one in the list when IDs are equal). A failure wins over
// pending: a failing check is news for the agent even while others run.
func Checks(required []string, runs []Check) ChecksVerdict {
	latest := map[string]Check{}
	var names []string
	for _, c := range runs {
		old, seen := latest[c.Name]
		if !seen {
			names = append(names, c.Name)
		}
		if !seen || c.ID >= old.ID {
			latest[c.Name] = c
		}
	}
	deciding := names
	var v ChecksVerdict
	if len(required) > 0 {
		deciding = nil
		for _, n := range required {
			if slices.Contains(deciding, n) {
				continue
			}
			deciding = append(deciding, n)
			if _, ok := latest[n]; !ok {
				v.Missing = append(v.Missing, n)
			}
		}
	}
	for _, n := range deciding {
		c, ok := latest[n]
		switch {
		case !ok:
		case c.Failed():
			v.Failed = append(v.Failed, c)
		case c.Status != "completed":
			v.Pending = append(v.Pending, c)
		}
	}
	switch {
	case len(v.Failed) > 0:
		v.State = ChecksFailing
	case len(v.Pending) > 0 || len(v.Missing) > 0:
		v.State = ChecksPending
	case len(deciding) == 0:
		v.State = ChecksNone
	default:
		v.State = ChecksPassing
	}
	return v
}
