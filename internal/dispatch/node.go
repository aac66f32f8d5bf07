package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// self is this process as a node of the store: its name and the hold on
// it (a lease on the node row), and what it tells operators through that
// row (NodeStatus): a refused config, a store outage, tracker trouble, a
// spend pause, agents it cannot run. The dispatcher's loop, claims and
// leases live in Dispatcher; this is who is dispatching and how it is.
type self struct {
	st    store.Store
	name  string
	now   func() time.Time
	lease func() time.Duration
	log   *slog.Logger
	// instance is this process's random id on its node row: the name is
	// held by one instance at a time (store.Store.TouchNode).
	instance string

	mu      sync.Mutex
	started time.Time
	status  NodeStatus
	// lastTick is when the last pass ended.
	lastTick time.Time
	// storeDown is when the current store outage began (zero: none);
	// storeBack when the store last came back (or this process started).
	storeDown, storeBack time.Time
	// registered: this process took its node name (register succeeded);
	// nameLost is set when another process took it: Run stops.
	registered bool
	nameLost   error
}

// outageNotice is how long a node keeps reporting a store outage that ended.
const outageNotice = time.Minute

// ErrNodeTaken: another live process uses this node name.
var ErrNodeTaken = errors.New("node name in use")

// begin marks the start of Run: leases of other nodes are judged only a
// lease period after it.
func (s *self) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = s.now()
	s.storeBack = s.started
}

// register takes the node name, refusing to run beside a live process that
// holds it. The hold is a lease on the node row (store.Store.TouchNode), not
// a PID: a row whose lease passed never blocks, and of two processes starting
// at once exactly one gets the name. A holder on this host whose PID is gone
// died without releasing it; its hold is taken over at once (by its instance
// id, so racing successors still get one winner) instead of after a lease.
func (s *self) register(ctx context.Context, running int) error {
	host, _ := os.Hostname()
	s.mu.Lock()
	s.status.Host = host
	s.mu.Unlock()
	err := s.touch(ctx, running, false, "")
	if !errors.Is(err, store.ErrNodeHeld) {
		s.markRegistered(err)
		return err
	}
	holder, ok, lerr := s.row(ctx)
	if lerr != nil {
		return lerr
	}
	var st NodeStatus
	_ = json.Unmarshal(holder.Status, &st)
	// Our own PID on another instance's row is a previous process's (PID 1
	// in a container, say): that one is gone.
	if ok && st.Host == host && (holder.PID == os.Getpid() || !pidAlive(holder.PID)) {
		if err = s.touch(ctx, running, false, holder.Instance); !errors.Is(err, store.ErrNodeHeld) {
			if err == nil {
				s.log.Info("took over the node name from a process that died without releasing it", "pid", holder.PID)
			}
			s.markRegistered(err)
			return err
		}
		holder, _, _ = s.row(ctx)
		_ = json.Unmarshal(holder.Status, &st)
	}
	return errors.Join(ErrNodeTaken, fmt.Errorf("node name %s is held by another drover serve (pid %d on %s, its hold lapses at %s unless it renews it); stop that process, or give this one its own name (dispatch.node in WORKFLOW.md)",
		s.name, holder.PID, nonEmpty(st.Host, "another host"), holder.LeaseUntil.UTC().Format(time.RFC3339)))
}

func (s *self) markRegistered(err error) {
	if err == nil {
		s.mu.Lock()
		s.registered = true
		s.mu.Unlock()
	}
}

func (s *self) isRegistered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registered
}

// row is the stored row of this node's name.
func (s *self) row(ctx context.Context) (store.Node, bool, error) {
	nodes, err := s.st.ListNodes(ctx)
	if err != nil {
		return store.Node{}, false, err
	}
	for _, n := range nodes {
		if n.Name == s.name {
			return n, true, nil
		}
	}
	return store.Node{}, false, nil
}

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// touch writes the node row with its status, renewing this process's hold
// on the name for a lease (release: ending it now, at shutdown, so a restart
// takes the name at once). supersede is an instance known dead whose hold
// may be taken.
func (s *self) touch(ctx context.Context, running int, release bool, supersede string) error {
	s.mu.Lock()
	st, _ := json.Marshal(s.status)
	tick, started := s.lastTick, s.started
	s.mu.Unlock()
	now := s.now()
	n := store.Node{Name: s.name, PID: os.Getpid(), StartedAt: started, SeenAt: now, Running: running, Status: st,
		Instance: s.instance, LeaseUntil: now.Add(s.lease()), Supersedes: supersede}
	if release {
		n.LeaseUntil = now
	}
	if !tick.IsZero() {
		n.LastTick = &tick
	}
	return s.st.TouchNode(ctx, n)
}

// lost says why this process no longer holds its node name (nil: it does).
func (s *self) lost() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nameLost
}

func (s *self) lose(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nameLost = err
}

// passed records the end of a pass at now and what the store said (err):
// an outage's start, its end (told for outageNotice after), or nothing.
func (s *self) passed(err error, now time.Time, stopping bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && !stopping:
		if errors.Is(err, store.ErrUnavailable) && s.storeDown.IsZero() {
			s.storeDown = now
		}
		s.status.StoreError = err.Error()
		if !s.storeDown.IsZero() {
			s.status.StoreError = fmt.Sprintf("the store is unreachable since %s: %v; agents keep running and their writes are retried",
				s.storeDown.UTC().Format(time.RFC3339), err)
		}
		s.log.Error("tick failed; agents keep running and writes are retried", "err", err)
	case err == nil && !s.storeDown.IsZero():
		// Back after an outage: say so for a while, since nobody could read
		// the node's status while the store was away.
		s.status.StoreError = fmt.Sprintf("the store was unreachable from %s to %s (%s); agents kept running and their writes were retried",
			s.storeDown.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), now.Sub(s.storeDown).Round(time.Second))
		s.log.Warn("store reachable again", "down_for", now.Sub(s.storeDown).Round(time.Millisecond))
		s.storeDown, s.storeBack = time.Time{}, now
	case err == nil && (s.storeBack.IsZero() || now.Sub(s.storeBack) > outageNotice):
		s.status.StoreError = ""
	}
	s.lastTick = now
}

// judges says whether other nodes' leases may be judged at now: only with a
// store that has worked for a whole lease period (after an outage, a
// database restart, every lease looks expired, and live owners need a lease
// period to renew theirs).
func (s *self) judges(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeDown.IsZero() && (s.storeBack.IsZero() || now.Sub(s.storeBack) >= s.lease())
}

// pastLife says whether a claim of this node's name renewed to leaseUntil
// was written by a previous process under the name: last renewed before
// this one started.
func (s *self) pastLife(leaseUntil time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !leaseUntil.After(s.started.Add(s.lease()))
}

// update changes the status under the lock.
func (s *self) update(f func(*NodeStatus)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.status)
}

// snapshot is the status as it is now.
func (s *self) snapshot() NodeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// since is t, or now when t is unset: when a trouble began.
func (s *self) since(t *time.Time) *time.Time {
	if t != nil {
		return t
	}
	now := s.now()
	return &now
}

// newSelf is the node named name of st, not registered yet.
func newSelf(st store.Store, name string, now func() time.Time, lease func() time.Duration, log *slog.Logger) *self {
	return &self{st: st, name: name, now: now, lease: lease, log: log, instance: board.NewID(), started: now()}
}
