package pullflow

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
)

// Follower reads, on the leader, the pull request (open, or closed and not
// merged) of every card in a completed column once per forge.Config.PollInterval (conditionally, with
// the stored ETag), and writes what Decide makes of each read.
type Follower struct {
	Store  store.Store
	Forge  forge.Forge
	Config func() *config.Config
	Lead   func(ctx context.Context) (bool, error) // nil: always
	Now    func() time.Time
	Log    *slog.Logger
	// Problem is told a failed read in words, "" once reads succeed.
	Problem func(msg string)
	// Notify turns a notification (a card the review loop blocked or gave
	// up on) into outbox rows written with the change; nil: none.
	Notify func(cfg *config.Config, m notify.Message) []store.OutboxItem

	mu  sync.Mutex
	now map[int]bool // pull requests to read at the next tick (a webhook named them)
}

// Poke asks for an immediate read of pull request number (0: all).
func (f *Follower) Poke(number int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.now == nil {
		f.now = map[int]bool{}
	}
	f.now[number] = true
}

// Tick reads the pull requests due now; read counts them. err is the
// store's; a forge's failure is logged and reported, and the card is read
// again at its next interval.
func (f *Follower) Tick(ctx context.Context) (read int, err error) {
	cfg := f.Config()
	if cfg == nil || cfg.Workspace.Git == nil || cfg.Workspace.Git.PullRequests == nil || f.Forge == nil {
		return 0, nil
	}
	if f.Lead != nil {
		if ok, err := f.Lead(ctx); err != nil || !ok {
			return 0, err
		}
	}
	pc := cfg.Workspace.Git.PullRequests
	interval := pc.PollInterval
	if interval <= 0 {
		interval = forge.DefaultPollInterval
	}
	var states []string
	for _, c := range cfg.Board.Columns {
		if c.Role == board.RoleCompleted {
			states = append(states, c.Name)
		}
	}
	if len(states) == 0 {
		return 0, nil
	}
	cards, err := f.Store.ListCards(ctx, store.CardFilter{States: states})
	if err != nil {
		return 0, err
	}
	poked := f.takePoked()
	now := f.clock()
	for _, c := range cards {
		pr := c.PullRequest
		// A closed one is read too: a card resumed after its block
		// (reopen the PR, then drover card resume) waits in review on the
		// reopened pull request, and on a still closed one is blocked again.
		if pr == nil || pr.State == board.PullMerged || pr.Number == 0 {
			continue
		}
		if pr.CheckedAt != nil && now.Sub(*pr.CheckedAt) < interval && !poked[pr.Number] && !poked[0] {
			continue
		}
		st, err := f.Forge.PullState(ctx, pr.Number, pr.ETag)
		if err != nil {
			f.log().Warn("could not read the pull request; reading it again later", "card_id", c.ID, "identifier", c.Identifier, "number", pr.Number, "error", err)
			f.problem("reading PR #" + itoa(pr.Number) + " of " + c.Identifier + ": " + err.Error())
			var rl *forge.RateLimitError
			if errors.As(err, &rl) {
				return read, nil // every read waits for the limit
			}
			continue
		}
		read++
		f.problem("")
		if err := f.apply(ctx, cfg, c, st, now); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue // the card moved meanwhile: read again next tick
			}
			return read, err
		}
	}
	return read, nil
}

func (f *Follower) apply(ctx context.Context, cfg *config.Config, c board.Card, st forge.PullState, now time.Time) error {
	out := Decide(*c.PullRequest, st, cfg.Workspace.Git.PullRequests.RequiredChecks, now)
	var history []board.Run
	if out.Verdict == CheckFailed {
		epoch := c.RetryEpoch
		var err error
		if history, err = f.Store.ListRuns(ctx, store.RunFilter{CardID: c.ID, RetryEpoch: &epoch}); err != nil {
			return err
		}
	}
	ch := change(cfg, c, out, history, now)
	if f.Notify != nil {
		for _, m := range notices(cfg, c, ch, now) {
			ch.Outbox = append(ch.Outbox, f.Notify(cfg, m)...)
		}
	}
	if err := f.Store.Apply(ctx, ch); err != nil {
		return err
	}
	if out.Verdict != None {
		f.log().Info("pull request", "card_id", c.ID, "identifier", c.Identifier, "number", out.PR.Number, "verdict", out.Verdict, "by", out.By, "state", ch.Card.State)
	}
	return nil
}

func (f *Follower) takePoked() map[int]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.now
	f.now = nil
	return p
}

func (f *Follower) problem(msg string) {
	if f.Problem != nil {
		f.Problem(msg)
	}
}

func (f *Follower) clock() time.Time {
	if f.Now != nil {
		return f.Now().UTC()
	}
	return time.Now().UTC()
}

func (f *Follower) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.New(slog.DiscardHandler)
}

func itoa(n int) string { return strconv.Itoa(n) }
