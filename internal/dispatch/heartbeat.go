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
// agents running. The goroutine ends with the dispatcher (Run's shutdown).
// With Options.Spawn set the caller renews leases with Heartbeat instead.
func (d *Dispatcher) ensureBeating() {
	if d.o.Spawn != nil {
		return
	}
	l := &d.jobs
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.beating {
		return
	}
	l.beating = true
	go func() {
		t := time.NewTimer(d.lease() / 3)
		defer t.Stop()
		for {
			select {
			case <-d.life.Done():
			case <-t.C:
				t.Reset(d.lease() / 3) // a reloaded lease takes effect
			}
			l.mu.Lock()
			if len(l.m) == 0 || d.life.Err() != nil {
				l.beating = false
				l.mu.Unlock()
				return
			}
			l.mu.Unlock()
			d.beatAll()
		}
	}()
}

// beatAll renews the lease of every run of this node whose agent is still
// running (a finished one is being routed: its claim is about to go), in
// one store call, and stops the runs whose claim another node took.
func (d *Dispatcher) beatAll() {
	jobs := d.jobs.snapshot()
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
