package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/reload"
)

// reload reads WORKFLOW.md again when it changed. A refused edit keeps the
// last good config in force and stays the node's config error (in drover
// status and on the dashboard) until the file loads again; it is notified
// once per distinct error.
func (d *Dispatcher) reload(ctx context.Context) {
	if d.o.Watcher == nil {
		return
	}
	cfg, changed, err := d.o.Watcher.Check()
	if err == nil {
		// Check reports a refused edit once; LastError keeps it.
		err = d.o.Watcher.LastError()
	}
	if err != nil {
		d.configRefused(ctx, err)
		return
	}
	d.self.update(func(st *NodeStatus) { st.ConfigError, st.ConfigErrorSince = "", nil })
	if changed && cfg != nil {
		if msg := reload.RestartNeeded(d.cfg.Load(), cfg); len(msg) > 0 {
			d.log.Warn("config changed keys that apply only after a restart", "keys", msg)
		}
		d.cfg.Store(cfg)
		d.usable.reset()
		sandbox.Forget()
		d.log.Info("config reloaded", "path", cfg.Path)
	}
}

// configRefused records a refused WORKFLOW.md edit on the node's status,
// and for a new error logs it and queues one notification.
func (d *Dispatcher) configRefused(ctx context.Context, err error) {
	fresh := false
	d.self.update(func(st *NodeStatus) {
		if st.ConfigError != err.Error() {
			fresh = true
			since := d.o.Now().UTC()
			st.ConfigErrorSince = &since
		}
		st.ConfigError = err.Error()
		st.ConfigErrorSince = d.self.since(st.ConfigErrorSince)
	})
	if !fresh {
		return
	}
	d.log.Error("config reload failed; keeping the last good config", "err", err)
	sum := sha256.Sum256([]byte(err.Error()))
	nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d.routes.notice(nctx, d.cfg.Load(), "config_error", "config/"+hex.EncodeToString(sum[:8]),
		"WORKFLOW.md edit refused, the last good config stays in force: "+err.Error())
}
