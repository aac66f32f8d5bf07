package config

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/suggest"
)

var (
	policyKeys  = []string{"max_attempts", "failed_state", "backoff", "release_churn_cap", "continuation_cap", "kinds", "breaker", "correlation", "repeat_cap"}
	backoffKeys = []string{"base", "max", "jitter"}
	breakerKeys = []string{"threshold", "window", "cooldown"}
	kindKeys    = []string{"cap", "tiers", "backoff"}
	corrKeys    = []string{"cards", "window"}
)

func decodePolicy(d *decoder, n *yaml.Node) policy.Config {
	pc := policy.Defaults()
	f := d.fields(n, "policy", policyKeys, strict)
	if f == nil {
		return pc
	}
	if v, ok := f["max_attempts"]; ok {
		if x, ok := d.integer(v, "policy.max_attempts"); ok {
			if x == 0 {
				d.errf(deref(v), "policy.max_attempts", "0 is not allowed; use a positive number, or -1 for unbounded")
			}
			pc.MaxAttempts = x
		}
	}
	if v, ok := f["failed_state"]; ok {
		pc.FailedState = d.str(v, "policy.failed_state", expandPlain)
	}
	if v, ok := f["backoff"]; ok {
		pc.Backoff = decodeBackoff(d, v, "policy.backoff", pc.Backoff)
	}
	pc.ReleaseChurnCap = positive(d, f, "release_churn_cap", "policy.release_churn_cap", pc.ReleaseChurnCap)
	pc.ContinuationCap = positive(d, f, "continuation_cap", "policy.continuation_cap", pc.ContinuationCap)
	if v, ok := f["breaker"]; ok {
		bf := d.fields(v, "policy.breaker", breakerKeys, strict)
		pc.BreakerThreshold = positive(d, bf, "threshold", "policy.breaker.threshold", pc.BreakerThreshold)
		if w, ok := bf["window"]; ok {
			pc.BreakerWindow = nonZero(d, w, "policy.breaker.window", pc.BreakerWindow)
		}
		if w, ok := bf["cooldown"]; ok {
			pc.BreakerCooldown = nonZero(d, w, "policy.breaker.cooldown", pc.BreakerCooldown)
		}
	}
	if v, ok := f["correlation"]; ok {
		cf := d.fields(v, "policy.correlation", corrKeys, strict)
		if c, ok := cf["cards"]; ok {
			pc.CorrelationCards = atLeastOrOff(d, c, "policy.correlation.cards", 2, pc.CorrelationCards)
		}
		if w, ok := cf["window"]; ok {
			pc.CorrelationWindow = nonZero(d, w, "policy.correlation.window", pc.CorrelationWindow)
		}
	}
	if v, ok := f["repeat_cap"]; ok {
		pc.RepeatCap = atLeastOrOff(d, v, "policy.repeat_cap", 2, pc.RepeatCap)
	}
	if v, ok := f["kinds"]; ok {
		for _, e := range d.entries(v, "policy.kinds") {
			p := "policy.kinds." + e.key
			k := policy.Kind(e.key)
			if !k.Valid() {
				d.errf(e.knode, p, "%q is not a failure kind%s; valid kinds: %s", e.key, suggest.DidYouMean(suggest.Closest(e.key, kindNames())), strings.Join(kindNames(), ", "))
				continue
			}
			pc.Kinds[k] = decodeKind(d, e.val, p, pc.Kinds[k], pc.Backoff)
		}
	}
	return pc
}

func decodeBackoff(d *decoder, n *yaml.Node, path string, b policy.Backoff) policy.Backoff {
	f := d.fields(n, path, backoffKeys, strict)
	if v, ok := f["base"]; ok {
		b.Base = nonZero(d, v, path+".base", b.Base)
	}
	if v, ok := f["max"]; ok {
		b.Max = nonZero(d, v, path+".max", b.Max)
	}
	if v, ok := f["jitter"]; ok {
		if x, ok := d.number(v, path+".jitter"); ok {
			if x < 0 || x > 1 {
				d.errf(deref(v), path+".jitter", "%v is out of range; use a fraction from 0 to 1 (e.g. 0.1)", x)
			} else {
				b.Jitter = x
			}
		}
	}
	if b.Max < b.Base {
		d.errf(deref(n), path+".max", "%s is less than base %s; raise max or lower base", b.Max, b.Base)
	}
	return b
}

func decodeKind(d *decoder, n *yaml.Node, path string, kp policy.KindPolicy, defBackoff policy.Backoff) policy.KindPolicy {
	f := d.fields(n, path, kindKeys, strict)
	if f == nil {
		return kp
	}
	if _, ok := f["cap"]; ok {
		c := positive(d, f, "cap", path+".cap", 1)
		kp.Cap = &c
	}
	tiers, hasTiers := f["tiers"]
	bo, hasBackoff := f["backoff"]
	if hasTiers && hasBackoff {
		d.errf(deref(n), path, "sets both tiers and backoff; keep one (tiers are fixed delays, backoff is exponential)")
		return kp
	}
	if hasTiers {
		kp.Backoff = nil
		kp.Tiers = nil
		tn := deref(tiers)
		if tn == nil || tn.Kind != yaml.SequenceNode || len(tn.Content) == 0 {
			d.errf(tn, path+".tiers", "must be a non-empty list of durations, e.g. [1m, 5m, 15m]")
			return kp
		}
		for i, t := range tn.Content {
			if x, ok := d.duration(t, fmt.Sprintf("%s.tiers[%d]", path, i)); ok {
				kp.Tiers = append(kp.Tiers, x)
			}
		}
	}
	if hasBackoff {
		b := decodeBackoff(d, bo, path+".backoff", defBackoff)
		kp.Backoff, kp.Tiers = &b, nil
	}
	return kp
}

func kindNames() []string {
	s := make([]string, len(policy.Kinds))
	for i, k := range policy.Kinds {
		s[i] = string(k)
	}
	return s
}

// validateFailedState defaults policy.failed_state to the board's first
// blocked column and checks it is a blocked or cancelled column.
func validateFailedState(d *decoder, cfg *Config, top map[string]*yaml.Node, boardOK bool) {
	if c, ok := cfg.Board.First(board.RoleBlocked); ok && !has(top, "policy", "failed_state") {
		cfg.Policy.FailedState = c.Name
	}
	if fs := cfg.Policy.FailedState; boardOK {
		n := at(top, "policy", "failed_state")
		if c, ok := cfg.Board.Column(fs); !ok {
			d.errf(n, "policy.failed_state", "%q is not a column on the board (columns: %s)", fs, strings.Join(cfg.Board.Names(), ", "))
		} else if c.Role != board.RoleBlocked && c.Role != board.RoleCancelled {
			d.errf(n, "policy.failed_state", "%q has role %s; a give-up state must be a sink that automation never reads as ready (a column with role blocked or cancelled)", fs, c.Role)
		}
	}
}

// capRetryBackoff: a retry-backoff cap from dispatch:/agent: applies when
// policy.backoff.max is unset.
func capRetryBackoff(cfg *Config, top map[string]*yaml.Node) {
	if !has(top, "policy", "backoff", "max") && (has(top, "agent", "max_retry_backoff_ms") || has(top, "dispatch", "max_retry_backoff")) {
		cfg.Policy.Backoff.Max = max(cfg.Dispatch.MaxRetryBackoff, cfg.Policy.Backoff.Base)
	}
}

// atLeastOrOff reads an integer that is either at least min or -1 (off).
func atLeastOrOff(d *decoder, v *yaml.Node, path string, min, def int) int {
	x, ok := d.integer(v, path)
	if !ok {
		return def
	}
	if x != -1 && x < min {
		d.errf(deref(v), path, "%d is not allowed; use %d or more, or -1 to turn it off", x, min)
		return def
	}
	return x
}
