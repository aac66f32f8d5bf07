package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/forge/github"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/pullflow"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/store"
)

// pullTick is how often the leader delivers pull_open rows and looks for
// pull requests due a read (each is read once per its poll_interval).
const pullTick = time.Second

// startPulls runs, when workspace.git.pull_request is set, the deliverer
// of pull_open rows and the follower of open pull requests on the leader.
// The returned stop waits for them.
func (a *app) startPulls(ctx context.Context, cfg *config.Config, d *dispatch.Dispatcher, log *slog.Logger) (func(), error) {
	if cfg.Workspace.Git == nil || cfg.Workspace.Git.PullRequests == nil {
		return func() {}, nil
	}
	f, err := github.New(github.Options{Config: *cfg.Workspace.Git.PullRequests})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	log = log.With("forge", "github")
	lead := func(ctx context.Context) (bool, error) { return a.st.TryLead(ctx, d.Node(), d.LeaderTTL()) }
	trackerKind := ""
	if cfg.Tracker.External() {
		trackerKind = cfg.Tracker.Kind
	}
	del := &pullflow.Deliverer{Store: a.st, Forge: f, Lead: lead, Log: log, Problem: d.SetForgeError, Tracker: trackerKind}
	fol := &pullflow.Follower{Store: a.st, Forge: f, Config: d.Config, Lead: lead, Log: log, Problem: d.SetForgeError, Notify: pullNotice}
	a.pullPoke = fol.Poke
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pullTick)
		defer t.Stop()
		for {
			if _, err := del.Tick(rctx); err != nil && rctx.Err() == nil {
				log.Warn("pull requests: delivering", "error", err)
			}
			if _, err := fol.Tick(rctx); err != nil && rctx.Err() == nil {
				log.Warn("pull requests: following", "error", err)
			}
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// pullWebhook is POST /api/v1/webhooks/pulls when workspace.git.pull_request
// is set: each event's pull requests are read at the follower's next tick.
func (a *app) pullWebhook(d *dispatch.Dispatcher) *server.PullWebhook {
	if g := d.Config().Workspace.Git; g == nil || g.PullRequests == nil {
		return nil
	}
	return &server.PullWebhook{
		Secret: func() string {
			if g := d.Config().Workspace.Git; g != nil && g.PullRequests != nil {
				return g.PullRequests.WebhookSecret
			}
			return ""
		},
		Event: func(eventType string, body []byte) {
			ev, err := github.ParseEvent(eventType, body)
			if err != nil || a.pullPoke == nil {
				return
			}
			for _, n := range ev.Pulls {
				a.pullPoke(n)
			}
		},
	}
}

// pullNotice queues the review loop's notifications (a card blocked by a
// closed pull request, a give-up after failing checks) as routing does.
func pullNotice(cfg *config.Config, m notify.Message) []store.OutboxItem {
	if m.Card != nil {
		m.Card.URL = cardURL(cfg, m.Card.Identifier)
	}
	return notify.Enqueue(cfg.Notify, m)
}
