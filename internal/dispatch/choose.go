package dispatch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	rtable "github.com/drover-dev/drover/internal/routing"
)

// profileRoutes is what picks the profile a card runs on: its own agent, else
// the first label route that matches it, else the default; and, when that
// profile is held, the first link of its fallback chain that can take it.
type profileRoutes struct {
	def      string
	routes   []rtable.Route
	fallback map[string][]string // profile → the profiles that take its cards while it is held
	closed   map[string]bool     // profiles that take no other profile's cards
	optOut   string              // the label that keeps a card on its profile ("" none)
}

// availability is what a dispatcher knows of a profile at claim time.
type availability struct {
	held     string // why the profile may not start a run now ("" = it may): its breaker, a pause, its probe out
	unusable string // why this node cannot run it (its program is missing here)
	full     string // why it has no room: its max_concurrent is reached
}

// busy says why a profile that is not held still cannot take a card here.
func (a availability) busy() string { return strings.TrimSpace(a.unusable + " " + a.full) }

// choice is where a card runs and why.
type choice struct {
	profile string // the profile the card runs on now
	base    string // the profile it runs on when nothing is held
	by      string // what chose base
	why     string // why profile is not base, as the run and explain say it ("" when it is)
	wait    string // when no profile can take it now: why ("" = it can run)
	chain   string // the part of wait about the chain or the opt-out label ("" none)
}

// choose is the pure choice of a card's profile. Labels compare without
// case. A held base with no link of its chain free leaves the card waiting
// on the base (wait says why, and what the chain found); a card with the
// opt-out label never leaves its base.
func choose(labels []string, own string, r profileRoutes, avail func(profile string) availability) choice {
	c := choice{base: r.def, by: "agents.default"}
	switch {
	case own != "":
		c.base, c.by = own, "the card's agent"
	default:
		for i, rt := range r.routes {
			if l, ok := anyLabel(labels, rt.Labels); ok {
				c.base, c.by = rt.Profile, fmt.Sprintf("agents.routes[%d] (label %s)", i, l)
				break
			}
		}
	}
	c.profile = c.base
	a := avail(c.base)
	switch {
	case a.held == "":
		c.wait = a.busy()
		return c
	case r.optOut != "" && hasLabel(labels, r.optOut):
		c.chain = fmt.Sprintf("; the card's label %s keeps it on %s", r.optOut, c.base)
		c.wait = a.held + c.chain
		return c
	}
	var tried []string
	for _, next := range r.fallback[c.base] {
		if next == c.base {
			continue
		}
		if r.closed[next] {
			tried = append(tried, next+" takes no fallback cards")
			continue
		}
		na := avail(next)
		if na.held == "" && na.busy() == "" {
			c.profile, c.why = next, fmt.Sprintf("%s held: %s; ran on %s (agents.profiles.%s.fallback)", c.base, a.held, next, c.base)
			return c
		}
		tried = append(tried, next+": "+strings.TrimSpace(na.held+" "+na.busy()))
	}
	if len(tried) > 0 {
		c.chain = "; fallback " + strings.Join(tried, "; ")
	}
	c.wait = a.held + c.chain
	return c
}

// anyLabel is the first of want that labels has, without case.
func anyLabel(labels, want []string) (string, bool) {
	for _, w := range want {
		if hasLabel(labels, w) {
			return w, true
		}
	}
	return "", false
}

func hasLabel(labels []string, l string) bool {
	return slices.ContainsFunc(labels, func(x string) bool { return strings.EqualFold(x, l) })
}

// routesOf is cfg's routing of cards to profiles.
func routesOf(cfg *config.Config) profileRoutes {
	a := &cfg.Agents
	return profileRoutes{def: a.Default, routes: a.Routes, fallback: a.Fallback, closed: a.TakesNoFallback, optOut: a.NoFallbackLabel}
}

// profileOf is the profile c runs on when nothing is held: its own agent,
// else its label route, else the default.
func profileOf(cfg *config.Config, c board.Card) string {
	return choose(c.Labels, c.Agent, routesOf(cfg), func(string) availability { return availability{} }).base
}
