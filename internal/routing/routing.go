// Package routing is the table by which cards reach an agent profile, as
// WORKFLOW.md gives it: label routes (agents.routes), each profile's
// fallback chain and whether it takes other profiles' cards, the label that
// keeps a card on its own profile, and each profile's cap of live runs.
// dispatch.choose reads it; config decodes it and reports its problems.
package routing

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultNoFallbackLabel keeps a card on its own profile while that profile
// is held (agents.no_fallback_label).
const DefaultNoFallbackLabel = "no-fallback"

// Table is the routing of one config.
type Table struct {
	// Routes send cards by label (agents.routes), first match first,
	// after a card's own agent, before agents.default.
	Routes []Route `json:"routes,omitempty"`
	// Fallback is each profile's chain: the profiles that take its cards
	// while it is held. TakesNoFallback names the profiles that take no
	// other profile's cards.
	Fallback        map[string][]string `json:"fallback,omitempty"`
	TakesNoFallback map[string]bool     `json:"takes_no_fallback,omitempty"`
	NoFallbackLabel string              `json:"no_fallback_label"`
	// MaxConcurrent caps a profile's live runs across every node sharing
	// the store (absent: no cap).
	MaxConcurrent map[string]int `json:"max_concurrent,omitempty"`
}

// Route sends the cards with any of Labels to Profile.
type Route struct {
	Labels  []string `yaml:"labels" json:"labels"`
	Profile string   `yaml:"profile" json:"profile"`
}

// ProfileKeys are the keys of agents.profiles.NAME this package reads.
type ProfileKeys struct {
	Fallback      []string `yaml:"fallback"`
	TakesFallback *bool    `yaml:"takes_fallback"`
	MaxConcurrent *int     `yaml:"max_concurrent"`
}

// File are the keys of agents: this package reads.
type File struct {
	Routes          []Route `yaml:"routes"`
	NoFallbackLabel *string `yaml:"no_fallback_label"`
}

// Problem is one bad value: its key path and what is wrong, with the fix.
type Problem struct{ Path, Msg string }

// Build reads the file's keys and every profile's, checked against the
// profiles there are.
func Build(f File, profiles map[string]ProfileKeys) (Table, []Problem) {
	t := Table{Routes: f.Routes, Fallback: map[string][]string{}, TakesNoFallback: map[string]bool{},
		MaxConcurrent: map[string]int{}, NoFallbackLabel: DefaultNoFallbackLabel}
	if f.NoFallbackLabel != nil {
		t.NoFallbackLabel = strings.TrimSpace(*f.NoFallbackLabel)
	}
	names := slices.Sorted(maps.Keys(profiles))
	var probs []Problem
	bad := func(path, format string, args ...any) {
		probs = append(probs, Problem{path, fmt.Sprintf(format, args...)})
	}
	known := func(path, name string) {
		if _, ok := profiles[name]; !ok {
			bad(path, "%q is not a profile; use one of %s", name, strings.Join(names, ", "))
		}
	}
	for name, k := range profiles {
		if k.TakesFallback != nil && !*k.TakesFallback {
			t.TakesNoFallback[name] = true
		}
	}
	for _, name := range names {
		k, path := profiles[name], "agents.profiles."+name+"."
		if len(k.Fallback) > 0 {
			t.Fallback[name] = k.Fallback
		}
		for i, next := range k.Fallback {
			at := fmt.Sprintf("%sfallback[%d]", path, i)
			switch {
			case next == name:
				bad(at, "is %s itself; a fallback is another profile that takes its cards while it is held", name)
			case slices.Index(k.Fallback, next) < i:
				bad(at, "names %s twice; each profile once, in the order to try them", next)
			case t.TakesNoFallback[next]:
				bad(at, "%s takes no other profile's cards (takes_fallback: false); remove it from the chain or drop that key", next)
			default:
				known(at, next)
			}
		}
		if k.MaxConcurrent != nil {
			if *k.MaxConcurrent < 1 {
				bad(path+"max_concurrent", "%d is not a cap; give 1 or more, or remove the key for no cap", *k.MaxConcurrent)
			}
			t.MaxConcurrent[name] = *k.MaxConcurrent
		}
	}
	for i, r := range f.Routes {
		path := fmt.Sprintf("agents.routes[%d]", i)
		if len(r.Labels) == 0 {
			bad(path+".labels", "missing; give the labels whose cards this route sends, e.g. labels: [docs]")
		}
		for j, l := range r.Labels {
			if strings.TrimSpace(l) == "" {
				bad(fmt.Sprintf("%s.labels[%d]", path, j), "is empty; give a label name")
			}
		}
		if r.Profile == "" {
			bad(path+".profile", "missing; name the profile these cards run on (%s)", strings.Join(names, ", "))
		} else {
			known(path+".profile", r.Profile)
		}
	}
	return t, probs
}
