package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Hooks are shell scripts run in the workspace (Symphony's hooks: section).
// They are passed to the shell as written: $VARS are not expanded by drover.
type Hooks struct {
	AfterCreate  string        `json:"after_create"`
	BeforeRun    string        `json:"before_run"`
	AfterRun     string        `json:"after_run"`
	BeforeRemove string        `json:"before_remove"`
	Timeout      time.Duration `json:"timeout"`
}

// DefaultHookTimeout bounds each hook unless hooks.timeout says.
const DefaultHookTimeout = 60 * time.Second

func decodeHooks(d *decoder, n *yaml.Node) Hooks {
	h := Hooks{Timeout: DefaultHookTimeout}
	f := d.fields(n, "hooks", []string{"after_create", "before_run", "after_run", "before_remove", "timeout", "timeout_ms"}, lenient)
	h.AfterCreate = d.str(f["after_create"], "hooks.after_create", expandNone)
	h.BeforeRun = d.str(f["before_run"], "hooks.before_run", expandNone)
	h.AfterRun = d.str(f["after_run"], "hooks.after_run", expandNone)
	h.BeforeRemove = d.str(f["before_remove"], "hooks.before_remove", expandNone)
	h.Timeout = durationPair(d, f, "hooks", "timeout", "timeout_ms", h.Timeout)
	if h.Timeout == 0 {
		key := "timeout"
		if _, ok := f["timeout_ms"]; ok {
			key = "timeout_ms"
		}
		d.errf(deref(f[key]), "hooks."+key, "0 is not allowed; hooks need a time limit (e.g. 60s)")
		h.Timeout = DefaultHookTimeout
	}
	return h
}
