package dispatch

import (
	"context"
	"time"
)

// The leases of all of this node's live runs are renewed together, every
// third of a lease, by one store statement (store.Store.HeartbeatAll) from
// one goroutine, instead of one goroutine and one write per run. It runs
// while the node has runs (start starts it) and stops when it has none.
// Losing a claim stops its run as lease_lost; a store outage keeps the
// agents running. With Options.Spawn set the caller renews leases with
// Heartbeat instead.
func (d *Dispatcher) ensureBeating() {
	if d.o.Spawn != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.beating {
		return
	}
	d.beating = true
	go d.beatLoop()
}

func (d *Dispatcher) beatLoop() {
	for {
		time.Sleep(d.lease() / 3)
		d.mu.Lock()
		if len(d.jobs) == 0 {
			d.beating = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		d.beatAll()
	}
}

// beatAll renews the lease of every run of this node whose agent is still
// running (a finished one is being routed: its claim is about to go), in
// one store call, and stops the runs whose claim another node took.
func (d *Dispatcher) beatAll() {
	jobs := d.snapshotJobs()
	epochs := make(map[string]int64, len(jobs))
	byCard := make(map[string]*job, len(jobs))
	for _, j := range jobs {
		if j.agentDone.Load() {
			continue
		}
		epochs[j.card.ID], byCard[j.card.ID] = j.claim.Epoch, j
	}
	if len(epochs) == 0 {
		return
	}
	lease := d.lease()
	ctx, cancel := context.WithTimeout(context.Background(), lease/3)
	lost, err := d.o.Store.HeartbeatAll(ctx, d.node, epochs, d.o.Now().Add(lease))
	cancel()
	if err != nil {
		d.log.Warn("heartbeat failed; the agents keep running", "runs", len(epochs), "err", err)
		return
	}
	for _, id := range lost {
		j := byCard[id]
		d.log.Warn("lease lost: another node took the card; stopping the agent", "card_id", j.card.ID, "identifier", j.card.Identifier, "run_id", j.run.ID)
		j.cancel(errLeaseLost)
	}
}

// Heartbeat renews the lease of every live run once, as the heartbeat
// goroutine does every third of a lease. It is for callers that set
// Options.Spawn (a simulation on a fake clock); production never calls it.
func (d *Dispatcher) Heartbeat() { d.beatAll() }
