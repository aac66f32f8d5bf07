package dispatch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// sandboxWhy says why profile p's sandbox cannot start on this node ("" when
// it can or p has none).
func sandboxWhy(cfg *config.Config, p string) string {
	prof, ok := cfg.Agents.Profile(p)
	if !ok || prof.Sandbox == nil {
		return ""
	}
	if why := sandbox.Probe(*prof.Sandbox); why != "" {
		return fmt.Sprintf("agent %s: its sandbox cannot start on this node (agents.profiles.%s.sandbox): %s", p, p, why)
	}
	return ""
}

// pauseUnsandboxable pauses, as a config_error, each sandboxed profile whose
// sandbox cannot start here (bwrap missing, user namespaces refused), and
// tells the operator once: such a profile never runs unsandboxed. drover
// agent resume NAME closes it; it pauses again while the cause remains.
func (d *Dispatcher) pauseUnsandboxable(ctx context.Context, cfg *config.Config) error {
	var bs map[string]breaker
	for _, p := range slices.Sorted(maps.Keys(cfg.Agents.Profiles)) {
		why := sandboxWhy(cfg, p)
		if why == "" {
			continue
		}
		if bs == nil {
			var err error
			if bs, err = readBreakers(ctx, d.o.Store); err != nil {
				return err
			}
		}
		was := bs[p]
		if was.State == policy.BreakerPaused && was.Kind == policy.KindConfigError {
			continue
		}
		now := d.o.Now().UTC()
		st := policy.BreakerState{State: policy.BreakerPaused, Kind: policy.KindConfigError, Reason: why, Since: &now}
		text := fmt.Sprintf("agent profile %s is %s: %s", p, st.State, why)
		ev := board.Event{At: now, Type: "agent_" + st.State, Actor: actorOf(d.node), Reason: text, Data: jsonOf(map[string]any{"agent": p, "kind": policy.KindConfigError})}
		rows := d.routes.rows(cfg, Notice{Event: policy.NotifyProfilePaused, Key: "agent/" + p + "/" + now.Format(time.RFC3339Nano) + "/sandbox",
			Profile: p, Text: text, At: now})
		if err := d.o.Store.Apply(ctx, store.Change{AgentState: agentState(p, st, was.version, now), Events: []board.Event{ev}, Outbox: rows}); err != nil {
			return err
		}
		d.log.Error("agent profile paused: its sandbox cannot start", "agent", p, "reason", why)
	}
	return nil
}
