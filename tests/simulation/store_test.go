package simulation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// errDead is what a crashed process's store handle answers: the process is
// gone, so nothing it would still write reaches the database. It does not
// wrap store.ErrUnavailable, so the dead process's goroutines give up at once.
var errDead = errors.New("simulation: this process crashed")

// simStore is the store as one process sees it: the real SQLite store behind
// a fault injector (store.ErrUnavailable on a seeded fraction of calls; a
// refused Apply writes nothing, a "lost reply" Apply writes and still fails)
// and a kill switch for the process that owns it (proc nil: the operator).
//
// Two things differ from the plain SQLite store (which runs on the fake
// clock too, through sqlstore.WithClock): TryLead is emulated on the fake
// clock, and ListCards breaks ties in board order by identifier number
// instead of by random id (cards created in the same millisecond would
// otherwise come back in a different order on replay).
type simStore struct {
	w     *World
	inner store.Store
	proc  *proc
}

var _ store.Store = (*simStore)(nil)

// gate decides whether a call reaches the database.
func (s *simStore) gate(op string) error {
	if p := s.proc; p != nil {
		if p.dead {
			return errDead
		}
		if p.dieAfter >= 0 {
			if p.dieAfter == 0 {
				p.dead = true
				return errDead
			}
			p.dieAfter--
		}
	}
	if s.w.fault() {
		return fmt.Errorf("%w: injected fault on %s", store.ErrUnavailable, op)
	}
	return nil
}

func (s *simStore) CreateCard(ctx context.Context, prefix string, c board.Card, actor string) (board.Card, error) {
	if err := s.gate("CreateCard"); err != nil {
		return board.Card{}, err
	}
	return s.inner.CreateCard(ctx, prefix, c, actor)
}

func (s *simStore) GetCard(ctx context.Context, ref string) (board.Card, error) {
	if err := s.gate("GetCard"); err != nil {
		return board.Card{}, err
	}
	if st := s.w.stale; st != nil && s.proc == s.w.proc && !st.dead && s.w.intn(3) == 0 {
		s.w.logf("%s renews its leases once more before %s reads %s", st.node, s.proc.node, ref)
		st.d.Heartbeat()
	}
	return s.inner.GetCard(ctx, ref)
}

func (s *simStore) ListCards(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	if err := s.gate("ListCards"); err != nil {
		return nil, err
	}
	cs, err := s.inner.ListCards(ctx, f)
	if err == nil && f.Order == store.OrderBoard {
		sortBoardOrder(cs)
	}
	return cs, err
}

// sortBoardOrder is the store's board order (priority, then age) with the
// identifier number, which follows creation, breaking ties.
func sortBoardOrder(cs []board.Card) {
	prio := func(p int) int {
		if p <= 0 {
			return 5
		}
		return p
	}
	sort.SliceStable(cs, func(a, b int) bool {
		if pa, pb := prio(cs[a].Priority), prio(cs[b].Priority); pa != pb {
			return pa < pb
		}
		return identNum(cs[a].Identifier) < identNum(cs[b].Identifier)
	})
}

func identNum(ident string) int {
	n, _ := strconv.Atoi(ident[strings.LastIndexByte(ident, '-')+1:])
	return n
}

func (s *simStore) CountByState(ctx context.Context) (map[string]int, error) {
	if err := s.gate("CountByState"); err != nil {
		return nil, err
	}
	return s.inner.CountByState(ctx)
}

func (s *simStore) Apply(ctx context.Context, ch store.Change) error {
	if err := s.gate("Apply"); err != nil {
		return err
	}
	if s.w.lostReply() {
		if err := s.inner.Apply(ctx, ch); err != nil {
			return err
		}
		return fmt.Errorf("%w: injected fault after commit (reply lost)", store.ErrUnavailable)
	}
	return s.inner.Apply(ctx, ch)
}

// ApplyAll is Apply's faults for a batch: a refused transaction writes
// nothing, a lost reply writes every change that passes its guards and
// still fails.
func (s *simStore) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	if err := s.gate("ApplyAll"); err != nil {
		return nil, err
	}
	if s.w.lostReply() {
		if _, err := s.inner.ApplyAll(ctx, chs); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: injected fault after commit (reply lost)", store.ErrUnavailable)
	}
	return s.inner.ApplyAll(ctx, chs)
}

func (s *simStore) HeartbeatAll(ctx context.Context, owner string, epochs map[string]int64, until time.Time) ([]string, error) {
	if err := s.gate("HeartbeatAll"); err != nil {
		return nil, err
	}
	return s.inner.HeartbeatAll(ctx, owner, epochs, until)
}

func (s *simStore) Heartbeat(ctx context.Context, cardID, owner string, epoch int64, until time.Time) error {
	if err := s.gate("Heartbeat"); err != nil {
		return err
	}
	return s.inner.Heartbeat(ctx, cardID, owner, epoch, until)
}

func (s *simStore) UpdateRunProgress(ctx context.Context, runID string, p store.RunProgress) error {
	if err := s.gate("UpdateRunProgress"); err != nil {
		return err
	}
	return s.inner.UpdateRunProgress(ctx, runID, p)
}

func (s *simStore) GetRun(ctx context.Context, id string) (board.Run, error) {
	if err := s.gate("GetRun"); err != nil {
		return board.Run{}, err
	}
	return s.inner.GetRun(ctx, id)
}

func (s *simStore) ListRuns(ctx context.Context, f store.RunFilter) ([]board.Run, error) {
	if err := s.gate("ListRuns"); err != nil {
		return nil, err
	}
	return s.inner.ListRuns(ctx, f)
}

func (s *simStore) ListEvents(ctx context.Context, f store.EventFilter) ([]board.Event, error) {
	if err := s.gate("ListEvents"); err != nil {
		return nil, err
	}
	return s.inner.ListEvents(ctx, f)
}

func (s *simStore) ListComments(ctx context.Context, cardID string) ([]board.Comment, error) {
	if err := s.gate("ListComments"); err != nil {
		return nil, err
	}
	return s.inner.ListComments(ctx, cardID)
}

func (s *simStore) DueOutbox(ctx context.Context, now time.Time, limit int) ([]store.OutboxItem, error) {
	if err := s.gate("DueOutbox"); err != nil {
		return nil, err
	}
	return s.inner.DueOutbox(ctx, now, limit)
}

func (s *simStore) MarkOutbox(ctx context.Context, id string, r store.OutboxResult) error {
	if err := s.gate("MarkOutbox"); err != nil {
		return err
	}
	return s.inner.MarkOutbox(ctx, id, r)
}

func (s *simStore) ListOutbox(ctx context.Context, f store.OutboxFilter) ([]store.OutboxItem, error) {
	if err := s.gate("ListOutbox"); err != nil {
		return nil, err
	}
	return s.inner.ListOutbox(ctx, f)
}

func (s *simStore) ListAgentStates(ctx context.Context) ([]store.AgentState, error) {
	if err := s.gate("ListAgentStates"); err != nil {
		return nil, err
	}
	return s.inner.ListAgentStates(ctx)
}

func (s *simStore) Spend(ctx context.Context, since time.Time, cardID string) (float64, error) {
	if err := s.gate("Spend"); err != nil {
		return 0, err
	}
	return s.inner.Spend(ctx, since, cardID)
}

func (s *simStore) TouchNode(ctx context.Context, n store.Node) error {
	if err := s.gate("TouchNode"); err != nil {
		return err
	}
	return s.inner.TouchNode(ctx, n)
}

func (s *simStore) ListNodes(ctx context.Context) ([]store.Node, error) {
	if err := s.gate("ListNodes"); err != nil {
		return nil, err
	}
	return s.inner.ListNodes(ctx)
}

func (s *simStore) Watch(ctx context.Context) <-chan struct{} { return s.inner.Watch(ctx) }

// TryLead is the store's leadership lease on the fake clock.
func (s *simStore) TryLead(ctx context.Context, node string, ttl time.Duration) (bool, error) {
	if err := s.gate("TryLead"); err != nil {
		return false, err
	}
	w := s.w
	now := w.clk.Now()
	if w.leader == node || w.leaderUntil.Before(now) {
		w.leader, w.leaderUntil = node, now.Add(ttl)
		return true, nil
	}
	return false, nil
}

func (s *simStore) Ping(ctx context.Context) error {
	if err := s.gate("Ping"); err != nil {
		return err
	}
	return s.inner.Ping(ctx)
}

func (s *simStore) Close() error    { return nil }
func (s *simStore) Backend() string { return s.inner.Backend() }
