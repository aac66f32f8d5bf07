package dispatch

import (
	"context"
	"encoding/json"
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
// it can or p has none), asking probe (nil: sandbox.Probe).
func sandboxWhy(cfg *config.Config, p string, probe func(sandbox.Config) string) string {
	prof, ok := cfg.Agents.Profile(p)
	if !ok || prof.Sandbox == nil {
		return ""
	}
	if probe == nil {
		probe = sandbox.Probe
	}
	if why := probe(*prof.Sandbox); why != "" {
		return fmt.Sprintf("agent %s: its sandbox cannot start on this node (agents.profiles.%s.sandbox): %s", p, p, why)
	}
	return ""
}

// liveFor is how recently a node must have been seen to count as live
// (explain's rule too).
const liveFor = 2 * time.Minute

// pauseUnsandboxable handles each sandboxed profile whose sandbox cannot
// start here (bwrap missing, user namespaces refused): such a profile never
// runs unsandboxed. This node marks it unusable in its status (it claims
// none of its cards; drover status lists it under unusable_agents) and says
// so once in its log. While another live node can run it, that is all: its
// cards run there. When no live node can, it is paused board-wide as a
// config_error and the operator is notified; drover agent resume NAME
// closes it, and it pauses again while the cause remains.
func (d *Dispatcher) pauseUnsandboxable(ctx context.Context, cfg *config.Config) error {
	var bs map[string]breaker
	var nodes []store.Node
	for _, p := range slices.Sorted(maps.Keys(cfg.Agents.Profiles)) {
		why := sandboxWhy(cfg, p, d.o.SandboxProbe)
		if why == "" {
			delete(d.usable.told, p)
			continue
		}
		d.usable.check(cfg, p, d.self) // into this node's status, for the others to read
		if !d.usable.told[p] {
			if d.usable.told == nil {
				d.usable.told = map[string]bool{}
			}
			d.usable.told[p] = true
			d.log.Error("agent profile unusable on this node: its sandbox cannot start", "agent", p, "reason", why)
		}
		if bs == nil {
			var err error
			if bs, err = readBreakers(ctx, d.o.Store); err != nil {
				return err
			}
			if nodes, err = d.o.Store.ListNodes(ctx); err != nil {
				return err
			}
		}
		was := bs[p]
		if was.State == policy.BreakerPaused && was.Kind == policy.KindConfigError {
			continue
		}
		now := d.o.Now().UTC()
		if runsElsewhere(nodes, d.node, p, now) {
			continue
		}
		st := policy.BreakerState{State: policy.BreakerPaused, Kind: policy.KindConfigError, Reason: why, Since: &now}
		text := fmt.Sprintf("agent profile %s is %s: %s", p, st.State, why)
		ev := board.Event{At: now, Type: "agent_" + st.State, Actor: actorOf(d.node), Reason: text, Data: jsonOf(map[string]any{"agent": p, "kind": policy.KindConfigError})}
		rows := d.routes.rows(cfg, Notice{Event: policy.NotifyProfilePaused, Key: "agent/" + p + "/" + now.Format(time.RFC3339Nano) + "/sandbox",
			Profile: p, Text: text, At: now})
		if err := d.o.Store.Apply(ctx, store.Change{AgentState: agentState(p, st, was.version, now), Events: []board.Event{ev}, Outbox: rows}); err != nil {
			return err
		}
		d.log.Error("agent profile paused: its sandbox cannot start on any live node", "agent", p, "reason", why)
	}
	return nil
}

// runsElsewhere reports whether a live node other than self can run
// profile: one seen lately, holding its name (a node that stopped released
// it), whose status does not list it as unusable (every
// node probes every sandboxed profile on each full pass, so a live node
// that cannot start it says so within a pass).
func runsElsewhere(nodes []store.Node, self, profile string, now time.Time) bool {
	for _, n := range nodes {
		if n.Name == self || now.Sub(n.SeenAt) >= liveFor || !n.LeaseUntil.After(now) {
			continue
		}
		var ns NodeStatus
		if json.Unmarshal(n.Status, &ns) == nil && ns.Unusable[profile] == "" {
			return true
		}
	}
	return false
}
