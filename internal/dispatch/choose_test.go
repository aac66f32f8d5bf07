package dispatch

import (
	"strings"
	"testing"

	rtable "github.com/drover-dev/drover/internal/routing"
)

func TestChoose(t *testing.T) {
	r := profileRoutes{
		def:      "claude",
		routes:   []rtable.Route{{Labels: []string{"docs"}, Profile: "cheap"}, {Labels: []string{"bug", "urgent"}, Profile: "codex"}},
		fallback: map[string][]string{"claude": {"codex", "gemini"}, "codex": {"claude"}, "cheap": {"locked", "gemini"}},
		closed:   map[string]bool{"locked": true},
		optOut:   "no-fallback",
	}
	type state map[string]availability
	cases := []struct {
		name        string
		labels      []string
		own         string
		st          state
		profile, by string
		why, wait   string // substrings; "" = must be empty
	}{
		{name: "default", profile: "claude", by: "agents.default"},
		{name: "the card's own agent wins over routes", own: "gemini", labels: []string{"bug"}, profile: "gemini", by: "the card's agent"},
		{name: "first matching route, label case folded", labels: []string{"URGENT", "docs"}, profile: "cheap", by: "agents.routes[0] (label docs)"},
		{name: "second route", labels: []string{"urgent"}, profile: "codex", by: "agents.routes[1] (label urgent)"},
		{name: "held base falls back to the first free link", st: state{"claude": {held: "credits exhausted"}},
			profile: "codex", by: "agents.default", why: "claude held: credits exhausted; ran on codex"},
		{name: "middle link down: the next one", st: state{"claude": {held: "credits exhausted"}, "codex": {held: "breaker open"}},
			profile: "gemini", why: "ran on gemini"},
		{name: "a busy link is skipped", st: state{"claude": {held: "paused"}, "codex": {full: "max_concurrent 1 reached"}},
			profile: "gemini", why: "ran on gemini"},
		{name: "whole chain held: wait on the base, saying what the chain found", st: state{"claude": {held: "paused"}, "codex": {held: "open"}, "gemini": {held: "open too"}},
			profile: "claude", wait: "paused; fallback codex: open; gemini: open too"},
		{name: "opt-out label waits", labels: []string{"No-Fallback"}, st: state{"claude": {held: "paused"}},
			profile: "claude", wait: "label no-fallback keeps it on claude"},
		{name: "a closed profile takes nothing", labels: []string{"docs"}, st: state{"cheap": {held: "paused"}},
			profile: "gemini", why: "cheap held: paused; ran on gemini"},
		{name: "a busy base waits, no fallback", st: state{"claude": {full: "max_concurrent reached"}},
			profile: "claude", wait: "max_concurrent reached"},
		{name: "no chain: wait", own: "gemini", st: state{"gemini": {held: "paused"}}, profile: "gemini", wait: "paused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := choose(c.labels, c.own, r, func(p string) availability { return c.st[p] })
			if got.profile != c.profile || (c.by != "" && got.by != c.by) {
				t.Errorf("choice %+v; want profile %s by %q", got, c.profile, c.by)
			}
			for _, w := range []struct{ got, want string }{{got.why, c.why}, {got.wait, c.wait}} {
				if (w.want == "") != (w.got == "") || !strings.Contains(w.got, w.want) {
					t.Errorf("choice %+v; want why %q and wait %q", got, c.why, c.wait)
				}
			}
		})
	}
}
