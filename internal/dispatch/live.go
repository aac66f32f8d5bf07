package dispatch

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// LiveNode is a node row that a running drover serve renews.
type LiveNode struct {
	store.Node
	Host string `json:"host"`
}

// LiveNodes lists the nodes of st that are live at now, other than this
// process: on this host, those whose pid runs; elsewhere, those that renewed
// their row within lease (a live node renews it at least every lease/3).
// Commands that must not run beside a serve (store copy, restore) refuse
// when it is not empty.
func LiveNodes(ctx context.Context, st store.Store, lease time.Duration, now time.Time) ([]LiveNode, error) {
	nodes, err := st.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var out []LiveNode
	for _, n := range nodes {
		if n.PID == os.Getpid() {
			continue
		}
		if h, ok := nodeLive(n, lease, now, host); ok {
			out = append(out, LiveNode{Node: n, Host: h})
		}
	}
	return out, nil
}

// nodeLive reports whether n is live and names its host: its process holds
// the node name's lease (a clean stop releases it; a lapsed one is free, as
// for serve's own start-up) and, on this host, its pid still runs.
func nodeLive(n store.Node, _ time.Duration, now time.Time, host string) (string, bool) {
	var st NodeStatus
	_ = json.Unmarshal(n.Status, &st)
	if !n.LeaseUntil.After(now) {
		return nonEmpty(st.Host, "another host"), false
	}
	if st.Host == host {
		return st.Host, pidAlive(n.PID)
	}
	return nonEmpty(st.Host, "another host"), true
}
