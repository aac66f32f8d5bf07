package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// follow pages the event log by seq, as the API's since=N and the SSE
// stream do, for the whole run. The returned function stops it and reports
// a violation unless it saw every event of the table exactly once, in order.
func (c *cluster) follow() func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var seqs []int64
	var since int64
	var failures []string
	read := func(ctx context.Context, st store.Store) int {
		evs, err := st.ListEvents(ctx, store.EventFilter{SinceSeq: since, Limit: 50})
		if err != nil {
			return -1
		}
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
			since = e.Seq
		}
		return len(evs)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, err := c.openStore()
		if err != nil {
			failures = append(failures, fmt.Sprintf("follower: %v", err))
			return
		}
		defer st.Close()
		for ctx.Err() == nil {
			if read(ctx, st) < 50 {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		st, err := c.openStore()
		if err != nil {
			return append(failures, fmt.Sprintf("follower: %v", err))
		}
		defer st.Close()
		ctx := context.Background()
		all, err := st.ListEvents(ctx, store.EventFilter{})
		if err != nil || len(all) == 0 {
			return append(failures, fmt.Sprintf("follower: %d events, %v", len(all), err))
		}
		for since < all[len(all)-1].Seq {
			if read(ctx, st) <= 0 {
				break
			}
		}
		have := map[int64]int{}
		for i, s := range seqs {
			have[s]++
			if i > 0 && s <= seqs[i-1] {
				failures = append(failures, fmt.Sprintf("follower read event %d after %d", s, seqs[i-1]))
			}
		}
		var missed []int64
		for _, e := range all {
			if have[e.Seq] != 1 {
				missed = append(missed, e.Seq)
			}
		}
		if len(missed) > 0 {
			failures = append(failures, fmt.Sprintf("a follower paging the event log by seq saw %d of %d events; not once: %v", len(seqs), len(all), missed))
		}
		return failures
	}
}

// impostors starts, for every node at once, two more drover serve with its
// config (so its node name) while it runs: each must exit non-zero naming
// the node name within 20s, and no node may stop meanwhile.
func (c *cluster) impostors() []string {
	// Let every node's current life take its name first.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		settled := true
		for _, nd := range c.nodes {
			if up, since := nd.up(); !up || time.Since(since) < 3*time.Second {
				settled = false
			}
		}
		if settled {
			break
		}
	}
	var mu sync.Mutex
	var out []string
	var wg sync.WaitGroup
	for _, nd := range c.nodes {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(c.bin, "--config", nd.config, "serve")
				var b bytes.Buffer
				cmd.Stdout, cmd.Stderr = &b, &b
				cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
				if err := cmd.Start(); err != nil {
					mu.Lock()
					out = append(out, err.Error())
					mu.Unlock()
					return
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				var v string
				select {
				case err := <-exited:
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(b.String(), "node name") {
						v = fmt.Sprintf("a second serve as %s exited with %v, want a refusal naming the node name:\n%s", nd.name, err, b.String())
					}
				case <-time.After(20 * time.Second):
					_ = cmd.Process.Kill()
					<-exited
					v = fmt.Sprintf("a second serve as %s stayed up beside the live one", nd.name)
				}
				if v != "" {
					mu.Lock()
					out = append(out, v)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for _, nd := range c.nodes {
		if nd.exitedEarly() {
			out = append(out, nd.name+" stopped while impostors of its name started:\n"+c.tail(nd, 20))
		}
	}
	return out
}
