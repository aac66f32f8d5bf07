package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/github"
	"github.com/drover-dev/drover/internal/tracker/linear"
)

// newTracker builds the external tracker tracker: names (nil for native).
func newTracker(cfg tracker.Config) (tracker.Tracker, error) {
	switch cfg.Kind {
	case tracker.KindGitHub:
		return github.New(github.Options{Config: cfg})
	case tracker.KindLinear:
		return linear.New(linear.Options{Config: cfg}), nil
	}
	return nil, nil
}

// checkTracker is the start-up check: a configuration the tracker refuses
// (a repository the token cannot see, a label it cannot create) stops serve
// with the key to fix; an unreachable tracker does not (drover's own store
// is the source of truth; the sync retries and reports the outage).
func checkTracker(ctx context.Context, t tracker.Tracker, log *slog.Logger) error {
	err := t.Check(ctx)
	var rl *tracker.RateLimitError
	if d, ok := t.(interface{ Dropped() []string }); ok && err == nil {
		for _, r := range d.Dropped() {
			log.Warn("tracker: the project has no workflow state for a default role; that role shows by comments only (set tracker.roles to map it)", "role", r)
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tracker.ErrUnavailable), errors.As(err, &rl):
		log.Warn("tracker: could not check the configuration against the tracker at start; syncing retries", "tracker", t.Kind(), "error", err)
		return nil
	}
	return fmt.Errorf("%w: %v", errConfig, err)
}

// unlabelledWarning is serve's start-up warning for an external tracker
// that requires no label: every issue in active_states is dispatched. It is
// a warning, not a refusal: a config written that way (Symphony's Linear
// configs name no labels; the project is the filter) keeps working, while
// drover init writes required_labels: [drover].
func unlabelledWarning(t tracker.Config) string {
	if !t.External() || len(t.RequiredLabels) > 0 {
		return ""
	}
	where := "repository " + t.Repo
	if t.Kind == tracker.KindLinear {
		where = "project " + t.ProjectSlug
	}
	return fmt.Sprintf("tracker: required_labels is empty, so every issue of the %s in active_states %v is dispatched; set tracker.required_labels (e.g. [%s]) to dispatch only the issues labelled so",
		where, t.ActiveStates, InitLabel)
}

// trackerRunner wires the sync, projection and delivery of t to the
// dispatcher d.
func (a *app) trackerRunner(t tracker.Tracker, d *dispatch.Dispatcher, log *slog.Logger) *tracker.Runner {
	b := func() board.Board { return d.Config().Board }
	lead := func(ctx context.Context) (bool, error) { return a.st.TryLead(ctx, d.Node(), d.LeaderTTL()) }
	log = log.With("tracker", t.Kind())
	return &tracker.Runner{
		Store: a.st,
		Syncer: &tracker.Syncer{Store: a.st, Tracker: t, Board: b, Log: log, Status: d.SetTrackerError, Faults: d.SetTrackerFaults,
			OwnLabels: ownLabels(d.Config().Tracker)},
		Projector: &tracker.Projector{Store: a.st, Board: b, Kind: t.Kind(), Log: log},
		Deliverer: &tracker.Deliverer{Store: a.st, Tracker: t, Lead: lead, Log: log, Refused: d.SetTrackerRefused},
		Lead:      lead,
		Interval:  func() time.Duration { return d.Config().Dispatch.PollInterval },
		Synced:    d.Refresh,
		Log:       log,
	}
}

// ownLabels are the labels tracker.roles has drover set.
func ownLabels(t tracker.Config) map[string]bool {
	m := map[board.Role]string{}
	for r, tr := range t.Roles {
		m[r] = tr.Label
	}
	return tracker.OwnLabels(m)
}
