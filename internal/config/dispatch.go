package config

import (
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// dispatch: is the dispatcher's own settings. Symphony's polling: and agent:
// sections are other spellings of some of its keys (polling.interval_ms,
// agent.max_turns, …), so they are read here too: adding a dispatch key and
// its Symphony alias is one edit in this file.

// Dispatch is the dispatcher's own settings. Symphony's polling.interval_ms
// and agent.* keys fill it when dispatch: does not.
type Dispatch struct {
	Node                 string         `json:"node"`
	Lease                time.Duration  `json:"lease"`
	PollInterval         time.Duration  `json:"poll_interval"`
	MaxConcurrent        int            `json:"max_concurrent"`
	MaxConcurrentByState map[string]int `json:"max_concurrent_by_state,omitempty"`
	MaxTurns             int            `json:"max_turns"`
	MaxRetryBackoff      time.Duration  `json:"max_retry_backoff"`
}

// Dispatch defaults.
const (
	DefaultLease         = 30 * time.Second
	DefaultPollInterval  = 5 * time.Second
	DefaultMaxConcurrent = 4
	DefaultMaxTurns      = 20
	DefaultMaxRetryWait  = 5 * time.Minute
)

var dispatchKeys = []string{"node", "lease", "poll_interval", "max_concurrent", "max_concurrent_by_state", "max_turns", "max_retry_backoff"}

// decodeDispatch reads dispatch:, falling back to Symphony's polling: and
// agent: sections for the keys they share. Setting both is an error.
func decodeDispatch(d *decoder, n, polling, agentSec *yaml.Node) Dispatch {
	ds := Dispatch{Lease: DefaultLease, PollInterval: DefaultPollInterval, MaxConcurrent: DefaultMaxConcurrent, MaxTurns: DefaultMaxTurns, MaxRetryBackoff: DefaultMaxRetryWait}
	f := d.fields(n, "dispatch", dispatchKeys, strict)
	pf := d.fields(polling, "polling", []string{"interval_ms"}, lenient)
	af := d.fields(agentSec, "agent", []string{"max_concurrent_agents", "max_turns", "max_retry_backoff_ms", "max_concurrent_agents_by_state"}, lenient)
	pick := func(dk, sec, sk string) (*yaml.Node, string) {
		v, hasD := f[dk]
		var w *yaml.Node
		hasS := false
		if sec == "polling" {
			w, hasS = pf[sk]
		} else {
			w, hasS = af[sk]
		}
		switch {
		case hasD && hasS:
			d.errf(deref(w), sec+"."+sk, "is set together with dispatch.%s; keep one", dk)
			return v, "dispatch." + dk
		case hasS:
			return w, sec + "." + sk
		case hasD:
			return v, "dispatch." + dk
		}
		return nil, ""
	}
	if v, ok := f["node"]; ok {
		ds.Node = d.str(v, "dispatch.node", expandPlain)
	}
	if ds.Node == "" {
		ds.Node, _ = os.Hostname()
		if ds.Node == "" {
			ds.Node = "drover"
		}
	}
	if v, ok := f["lease"]; ok {
		ds.Lease = nonZero(d, v, "dispatch.lease", ds.Lease)
		if ds.Lease < 3*time.Second {
			d.errf(deref(v), "dispatch.lease", "%s is too short; use at least 3s (the heartbeat runs at a third of it)", ds.Lease)
		}
	}
	if v, p := pick("poll_interval", "polling", "interval_ms"); v != nil {
		x, ok := d.durationOrMillis(v, p)
		if ok && x < 100*time.Millisecond {
			d.errf(deref(v), p, "%s is too short; poll at most every 100ms", x)
		} else if ok {
			ds.PollInterval = x
		}
	}
	if v, p := pick("max_concurrent", "agent", "max_concurrent_agents"); v != nil {
		if x, ok := d.integer(v, p); ok && x < 1 {
			d.errf(deref(v), p, "%d is not allowed; use 1 or more", x)
		} else if ok {
			ds.MaxConcurrent = x
		}
	}
	if v, p := pick("max_turns", "agent", "max_turns"); v != nil {
		if x, ok := d.integer(v, p); ok && x < 1 {
			d.errf(deref(v), p, "%d is not allowed; use 1 or more", x)
		} else if ok {
			ds.MaxTurns = x
		}
	}
	if v, p := pick("max_retry_backoff", "agent", "max_retry_backoff_ms"); v != nil {
		x, ok := d.durationOrMillis(v, p)
		if ok {
			ds.MaxRetryBackoff = x
		}
	}
	if v, p := pick("max_concurrent_by_state", "agent", "max_concurrent_agents_by_state"); v != nil {
		ds.MaxConcurrentByState = map[string]int{}
		for _, e := range d.entries(v, p) {
			if x, ok := d.integer(e.val, p+"."+e.key); ok {
				if x < 1 {
					d.errf(deref(e.val), p+"."+e.key, "%d is not allowed; use 1 or more (move the state out of active_states to stop it)", x)
				}
				ds.MaxConcurrentByState[e.key] = x
			}
		}
	}
	return ds
}

// validateByState checks every state of max_concurrent_by_state is one the
// tracker hands out.
func validateByState(d *decoder, cfg *Config, top map[string]*yaml.Node, boardOK bool) {
	cols := strings.Join(cfg.Board.Names(), ", ")
	byState := "dispatch.max_concurrent_by_state"
	if _, ok := top["agent"]; ok && top["dispatch"] == nil {
		byState = "agent.max_concurrent_agents_by_state"
	}
	for _, s := range sortedKeys(cfg.Dispatch.MaxConcurrentByState) {
		if cfg.Tracker.Kind == TrackerNative && boardOK {
			if _, ok := cfg.Board.Column(s); !ok {
				d.errf(nil, byState+"."+s, "%q is not a column on the board (columns: %s)", s, cols)
			}
		} else if !containsFold(cfg.Tracker.ActiveStates, s) {
			d.errf(nil, byState+"."+s, "%q is not one of tracker.active_states (%s)", s, strings.Join(cfg.Tracker.ActiveStates, ", "))
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
