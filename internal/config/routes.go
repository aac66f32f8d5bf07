package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultNoFallbackLabel is the label that keeps a card on its own profile
// while that profile is held (agents.no_fallback_label).
const DefaultNoFallbackLabel = "no-fallback"

// chain reads one profile's fallback, takes_fallback and max_concurrent;
// the chain's names are checked once every profile is known (routes).
func (d *decoder) chain(a *Agents, name string, pf profileFile) {
	path := "agents.profiles." + name + "."
	if len(pf.Fallback) > 0 {
		a.Fallback[name] = pf.Fallback
	}
	if pf.TakesFallback != nil && !*pf.TakesFallback {
		a.TakesNoFallback[name] = true
	}
	if pf.MaxConcurrent != nil {
		d.check(*pf.MaxConcurrent > 0, path+"max_concurrent", "%d is not a cap; give 1 or more, or remove the key for no cap", *pf.MaxConcurrent)
		a.MaxConcurrent[name] = *pf.MaxConcurrent
	}
}

// routes checks the fallback chains against the profiles and reads
// agents.routes and agents.no_fallback_label.
func (d *decoder) routes(a *Agents, f agentsFile, names []string) {
	for _, name := range slices.Sorted(maps.Keys(a.Fallback)) {
		seen := map[string]bool{}
		for i, next := range a.Fallback[name] {
			path := fmt.Sprintf("agents.profiles.%s.fallback[%d]", name, i)
			switch {
			case next == name:
				d.errf(path, "is %s itself; a fallback is another profile that takes its cards while it is held", name)
			case seen[next]:
				d.errf(path, "names %s twice; each profile once, in the order to try them", next)
			default:
				d.oneOf(path, next, names, "a profile")
			}
			seen[next] = true
		}
	}
	for i, r := range f.Routes {
		path := fmt.Sprintf("agents.routes[%d]", i)
		d.check(len(r.Labels) > 0, path+".labels", "missing; give the labels whose cards this route sends, e.g. labels: [docs]")
		for j, l := range r.Labels {
			d.check(strings.TrimSpace(l) != "", fmt.Sprintf("%s.labels[%d]", path, j), "is empty; give a label name")
		}
		if r.Profile == "" {
			d.errf(path+".profile", "missing; name the profile these cards run on (%s)", strings.Join(names, ", "))
		} else {
			d.oneOf(path+".profile", r.Profile, names, "a profile")
		}
	}
	a.Routes = f.Routes
	a.NoFallbackLabel = DefaultNoFallbackLabel
	if f.NoFallbackLabel != nil {
		a.NoFallbackLabel = strings.TrimSpace(*f.NoFallbackLabel)
	}
}
