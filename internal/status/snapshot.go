package status

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/budget"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/version"
)

// Snapshot reads the store and returns the state at now. cfg may be nil (the
// default board, no agents, no limits).
func Snapshot(ctx context.Context, st store.Store, cfg *config.Config, now time.Time) (State, error) {
	now = now.UTC()
	b := board.Default()
	maxAttempts := 10
	limits := config.Limits{AgentCommentsPerRun: config.DefaultAgentCommentsPerRun, AgentCommentsPerCard: config.DefaultAgentCommentsPerCard,
		AgentProgressPerRun: config.DefaultAgentProgressPerRun, AgentProgressPerCard: config.DefaultAgentProgressPerCard}
	if cfg != nil {
		b, limits = cfg.Board, cfg.Limits
		maxAttempts = cfg.Policy.MaxAttempts
	}
	s := State{GeneratedAt: now, RateLimits: json.RawMessage("null"),
		Running: []Running{}, Retrying: []Retrying{}, Blocked: []Blocked{}, Parked: []Parked{},
		Agents: []Agent{}, Errors: []Error{}, Nodes: []Node{}, Columns: []Column{}, Drover: version.Get(),
		AgentLimits: AgentLimits{CommentsPerRun: limits.AgentCommentsPerRun, CommentsPerCard: limits.AgentCommentsPerCard,
			ProgressPerRun: limits.AgentProgressPerRun, ProgressPerCard: limits.AgentProgressPerCard}}

	counts, err := st.CountByState(ctx)
	if err != nil {
		return s, fmt.Errorf("status: count cards: %w", err)
	}
	for _, c := range b.Columns {
		s.Columns = append(s.Columns, Column{Name: c.Name, Role: c.Role, Count: counts[c.Name]})
		s.Counts.Cards += counts[c.Name]
		switch c.Role {
		case board.RoleBlocked:
			s.Counts.Blocked += counts[c.Name]
		case board.RoleParked:
			s.Counts.Parked += counts[c.Name]
		}
	}
	steps := []func() error{
		func() error { return s.running(ctx, st, now, maxAttempts) },
		func() error { return s.retrying(ctx, st, b, now, maxAttempts) },
		func() error { return s.sinks(ctx, st, b) },
		func() error { return s.agents(ctx, st, cfg) },
		func() error { return s.spend(ctx, st, limits, now) },
		func() error { return s.nodes(ctx, st, now) },
		func() error { return s.outbox(ctx, st) },
		func() error { return s.retention(ctx, st, cfg) },
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return s, fmt.Errorf("status: %w", err)
		}
	}
	s.Counts.Running, s.Counts.Retrying = len(s.Running), len(s.Retrying)
	return s, nil
}

func (s *State) running(ctx context.Context, st store.Store, now time.Time, maxAttempts int) error {
	runs, err := st.ListRuns(ctx, store.RunFilter{Open: store.Bool(true)})
	if err != nil {
		return err
	}
	for _, r := range runs {
		c, err := st.GetCard(ctx, r.CardID)
		if err != nil {
			continue // the card went away under us; the next snapshot is right
		}
		started := r.ClaimedAt
		if r.StartedAt != nil {
			started = *r.StartedAt
		}
		row := Running{
			IssueID: c.ID, IssueIdentifier: c.Identifier, State: c.State, SessionID: r.ID,
			LastMessage: r.LastOutput, StartedAt: started.UTC(),
			Tokens: Tokens{r.TokensIn, r.TokensOut, r.TokensIn + r.TokensOut},
			RunID:  r.ID, Title: c.Title, Agent: r.Agent, Node: r.Node, Attempt: r.Attempt,
			MaxAttempts: maxAttempts, RetryEpoch: r.RetryEpoch, ElapsedS: secs(now.Sub(started)),
			LastOutput: r.LastOutput, CostUSD: r.CostUSD, LogPath: r.LogPath, Counted: counted(ctx, st, c.ID, r.RetryEpoch),
		}
		if ev, err := st.ListEvents(ctx, store.EventFilter{CardID: c.ID, Newest: true, Limit: 1}); err == nil && len(ev) > 0 {
			at := ev[0].At.UTC()
			row.LastEvent, row.LastEventAt = ev[0].Type, &at
		}
		row.AgentComments, row.AgentProgress = s.agentWrites(ctx, st, r)
		s.Running = append(s.Running, row)
	}
	sort.SliceStable(s.Running, func(i, j int) bool { return s.Running[i].StartedAt.Before(s.Running[j].StartedAt) })
	return nil
}

// agentWrites counts the comments and progress notes r's agent wrote, from
// the run's events (as many as the caps allow, and some).
func (s *State) agentWrites(ctx context.Context, st store.Store, r board.Run) (comments, progress int) {
	l := s.AgentLimits
	limit := 10000
	if l.CommentsPerRun >= 0 && l.ProgressPerRun >= 0 {
		limit = l.CommentsPerRun + l.ProgressPerRun + 200
	}
	since := r.ClaimedAt
	evs, err := st.ListEvents(ctx, store.EventFilter{CardID: r.CardID, Since: &since, Newest: true, Limit: limit})
	if err != nil {
		return 0, 0
	}
	for _, e := range evs {
		switch {
		case e.RunID != r.ID:
		case e.Type == board.EvCommented && strings.HasPrefix(e.Actor, "agent:"):
			comments++
		case e.Type == board.EvAgentProgress:
			progress++
		}
	}
	return comments, progress
}

func (s *State) retrying(ctx context.Context, st store.Store, b board.Board, now time.Time, maxAttempts int) error {
	var eligible []string
	for _, c := range b.Columns {
		if c.Role == board.RoleEligible {
			eligible = append(eligible, c.Name)
		}
	}
	if len(eligible) == 0 {
		return nil
	}
	cards, err := st.ListCards(ctx, store.CardFilter{States: eligible, Claimed: store.Bool(false), ScheduledAfter: &now, Order: store.OrderNextAttempt, Limit: ListCap})
	if err != nil {
		return err
	}
	for _, c := range cards {
		row := Retrying{IssueID: c.ID, IssueIdentifier: c.Identifier, Attempt: 1, DueAt: c.NextAttemptAt.UTC(),
			Title: c.Title, State: c.State, Agent: c.Agent, MaxAttempts: maxAttempts,
			DueInS: secs(c.NextAttemptAt.Sub(now)), Reason: c.StateReason, Error: c.StateReason}
		if runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID, Newest: true, Limit: 1}); err == nil && len(runs) > 0 {
			r := runs[0]
			row.Kind, row.LastAttempt, row.RunID = r.Kind, r.Attempt, r.ID
			if r.Error != "" {
				row.Error = r.Error
			}
			if row.Agent == "" {
				row.Agent = r.Agent
			}
			if r.RetryEpoch == c.RetryEpoch {
				row.Attempt = r.Attempt + 1
			}
		}
		row.Counted = counted(ctx, st, c.ID, c.RetryEpoch)
		s.Retrying = append(s.Retrying, row)
	}
	sort.SliceStable(s.Retrying, func(i, j int) bool { return s.Retrying[i].DueAt.Before(s.Retrying[j].DueAt) })
	return nil
}

// sinks fills blocked[] and parked[], newest first, capped at ListCap.
func (s *State) sinks(ctx context.Context, st store.Store, b board.Board) error {
	var blocked, parked []string
	for _, c := range b.Columns {
		switch c.Role {
		case board.RoleBlocked:
			blocked = append(blocked, c.Name)
		case board.RoleParked:
			parked = append(parked, c.Name)
		}
	}
	if len(blocked) > 0 {
		cards, err := st.ListCards(ctx, store.CardFilter{States: blocked, Order: store.OrderUpdated, Limit: ListCap})
		if err != nil {
			return err
		}
		for _, c := range cards {
			s.Blocked = append(s.Blocked, Blocked{IssueID: c.ID, IssueIdentifier: c.Identifier, Identifier: c.Identifier,
				Title: c.Title, State: c.State, StateReason: c.StateReason, BlockReason: c.BlockReason, GaveUp: c.GaveUp, UpdatedAt: c.UpdatedAt.UTC()})
		}
	}
	if len(parked) > 0 {
		cards, err := st.ListCards(ctx, store.CardFilter{States: parked, Order: store.OrderUpdated, Limit: ListCap})
		if err != nil {
			return err
		}
		for _, c := range cards {
			q, err := Question(ctx, st, c)
			if err != nil {
				return err
			}
			s.Parked = append(s.Parked, Parked{IssueID: c.ID, IssueIdentifier: c.Identifier, Identifier: c.Identifier,
				Title: c.Title, State: c.State, Question: q, UpdatedAt: c.UpdatedAt.UTC()})
		}
	}
	return nil
}

// Question is what a parked card asks: its last comment by an agent (without
// the "Question: " the dispatcher writes before it), or its state reason when
// no agent commented.
func Question(ctx context.Context, st store.Store, c board.Card) (string, error) {
	cms, err := st.ListComments(ctx, c.ID)
	if err != nil {
		return "", err
	}
	for i := len(cms) - 1; i >= 0; i-- {
		if strings.HasPrefix(cms[i].Author, "agent") {
			return strings.TrimPrefix(cms[i].Body, "Question: "), nil
		}
	}
	return c.StateReason, nil
}

func (s *State) agents(ctx context.Context, st store.Store, cfg *config.Config) error {
	states, err := st.ListAgentStates(ctx)
	if err != nil {
		return err
	}
	byName := map[string]store.AgentState{}
	for _, a := range states {
		byName[a.Name] = a
	}
	names := map[string]bool{}
	if cfg != nil {
		for n := range cfg.Agents.Profiles {
			names[n] = true
		}
	}
	for n := range byName {
		names[n] = true
	}
	for n := range names {
		a := Agent{Name: n, State: "closed"}
		if cfg != nil {
			if p, ok := cfg.Agents.Profiles[n]; ok {
				a.Kind = p.Kind
			}
			a.Default = cfg.Agents.Default == n
			a.Fallback, a.MaxConcurrent = cfg.Agents.Fallback[n], cfg.Agents.MaxConcurrent[n]
		}
		if as, ok := byName[n]; ok {
			if as.State != "" {
				a.State = as.State
			}
			a.Reason, a.Until, a.FailureKind = as.Reason, as.Until, as.Kind
			var bs policy.BreakerState
			if json.Unmarshal(as.Data, &bs) == nil && a.State != policy.BreakerClosed {
				a.Probe = bs.ProbeTests()
			}
			if !as.UpdatedAt.IsZero() {
				u := as.UpdatedAt.UTC()
				a.UpdatedAt = &u
			}
		}
		s.Agents = append(s.Agents, a)
	}
	sort.Slice(s.Agents, func(i, j int) bool { return s.Agents[i].Name < s.Agents[j].Name })
	return nil
}

func (s *State) spend(ctx context.Context, st store.Store, l config.Limits, now time.Time) error {
	day := l.DayBoundary.Start(now).UTC()
	b, err := budget.ReadDay(ctx, st, l, now)
	if err != nil {
		return err
	}
	next := l.DayBoundary.Next(now).UTC()
	s.Spend = Spend{TodayUSD: b.SpentUSD, DayCapUSD: l.MaxCostPerDayUSD, PerCardCapUSD: l.MaxCostPerCardUSD, DayStart: day,
		ReservedUSD: b.ReservedUSD, EstimateUSD: b.EstimateUSD, EstimateSource: b.EstimateOf, RunningToday: b.Running,
		Paused: b.Capped(), Reason: b.Paused(next), NextDayStart: next}
	// codex_totals: runs claimed since the day started, newest first (the
	// filter keeps a long run history out of every snapshot).
	runs, err := st.ListRuns(ctx, store.RunFilter{ClaimedSince: &day, Newest: true, Limit: 5000})
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.ClaimedAt.Before(day) {
			break
		}
		t := &s.CodexTotals
		t.Runs++
		t.InputTokens += r.TokensIn
		t.OutputTokens += r.TokensOut
		t.CostUSD += r.CostUSD
		if r.StartedAt != nil {
			end := now
			if r.FinishedAt != nil {
				end = *r.FinishedAt
			}
			t.SecondsRunning += secs(end.Sub(*r.StartedAt))
		}
	}
	s.CodexTotals.TotalTokens = s.CodexTotals.InputTokens + s.CodexTotals.OutputTokens
	return nil
}

// nodeStatusKeys are the keys of a node's Status object that become errors.
var nodeStatusKeys = []string{"config_error", "store_error", "dispatch_paused", "tracker_error", "tracker_refused", "forge_error"}

func (s *State) nodes(ctx context.Context, st store.Store, now time.Time) error {
	nodes, err := st.ListNodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		s.Nodes = append(s.Nodes, Node{Name: n.Name, PID: n.PID, LastTick: n.LastTick, SeenAt: n.SeenAt.UTC(),
			Running: n.Running, Stale: now.Sub(n.SeenAt) > StaleAfter})
		if len(n.Status) == 0 {
			continue
		}
		var m map[string]any
		if json.Unmarshal(n.Status, &m) != nil {
			continue
		}
		for _, k := range nodeStatusKeys {
			msg := statusText(m[k])
			if msg == "" {
				continue
			}
			seen := n.SeenAt.UTC()
			if at, ok := m[k+"_since"].(string); ok { // when the node first saw it
				if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
					seen = t.UTC()
				}
			}
			s.Errors = append(s.Errors, Error{Code: k, Source: "node:" + n.Name, Message: msg, Since: &seen})
			if k == "dispatch_paused" && strings.Contains(msg, "max_cost_per_day") {
				s.Spend.Paused = true
			}
		}
		s.trackerFaults(n, m["tracker_faults"])
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	return nil
}

// trackerFaults adds one tracker_fault error per issue whose data the
// node's tracker sync could not take (a node status's tracker_faults).
func (s *State) trackerFaults(n store.Node, v any) {
	list, _ := v.([]any)
	for _, x := range list {
		f, _ := x.(map[string]any)
		str := func(k string) string { v, _ := f[k].(string); return v }
		msg := str("issue")
		if c := str("card"); c != "" {
			msg += " (" + c + ")"
		}
		if cm := str("comment"); cm != "" {
			msg += ", comment " + cm
		}
		msg += ": " + str("reason")
		var since *time.Time
		if t, err := time.Parse(time.RFC3339Nano, str("since")); err == nil {
			t = t.UTC()
			since = &t
		}
		s.Errors = append(s.Errors, Error{Code: "tracker_fault", Source: "node:" + n.Name, Message: msg, Since: since, Card: str("card")})
	}
}

// statusText turns a status value into words: "" for absent, false or empty.
func statusText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// outbox reports channels whose pending notifications carry delivery errors.
func (s *State) outbox(ctx context.Context, st store.Store) error {
	items, err := st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true), Limit: 1000})
	if err != nil {
		return err
	}
	type agg struct {
		n     int
		last  string
		since time.Time
	}
	// Rows waiting for an unconfigured channel are told apart from failing
	// ones: nothing is wrong with the receiver, a channel is missing.
	by := map[string]*agg{}
	var order []string
	for _, it := range items {
		if it.LastError == "" {
			continue
		}
		code := "notify_failing"
		if it.Channel == "tracker" {
			code = "projection_failing"
		} else if strings.HasPrefix(it.LastError, notify.WaitingPrefix) {
			code = "notify_waiting"
		}
		k := code + "\x00" + it.Channel
		a := by[k]
		if a == nil {
			a = &agg{since: it.CreatedAt}
			by[k] = a
			order = append(order, k)
		}
		a.n++
		a.last = it.LastError
	}
	for _, k := range order {
		a := by[k]
		code, ch, _ := strings.Cut(k, "\x00")
		since := a.since.UTC()
		msg := fmt.Sprintf("%d %s notification(s) not delivered; last error: %s", a.n, ch, a.last)
		if code == "projection_failing" {
			msg = fmt.Sprintf("%d change(s) not shown in the tracker yet (the cards' outcomes stand); last error: %s", a.n, a.last)
		}
		if code == "notify_waiting" {
			msg = fmt.Sprintf("%d %s notification(s) waiting for a channel: %s; drover outbox ls lists them", a.n, ch, strings.TrimPrefix(a.last, notify.WaitingPrefix))
		}
		s.Errors = append(s.Errors, Error{Code: code, Source: "outbox:" + ch, Since: &since, Message: msg})
	}
	return nil
}

func secs(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d.Milliseconds()) / 1000
}

// counted is how many finished runs of the card's retry epoch spent
// max_attempts (0 when the store cannot say).
func counted(ctx context.Context, st store.Store, cardID string, epoch int) int {
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: cardID, RetryEpoch: &epoch, Open: store.Bool(false)})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs {
		if r.Counted {
			n++
		}
	}
	return n
}
