package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
)

// Defaults for the sections in this file.
const (
	DefaultDayBoundary   = "00:00 UTC"
	DefaultWorkspaceRoot = ".drover/workspaces"
	DefaultHookTimeout   = 60 * time.Second
	DefaultLease         = 30 * time.Second
	DefaultPollInterval  = 5 * time.Second
	DefaultMaxConcurrent = 4
	DefaultMaxTurns      = 20
	DefaultMaxRetryWait  = 5 * time.Minute
	DefaultServerHost    = "127.0.0.1"
	// InitServerPort is the port `drover init` writes (server.port defaults to 0, off).
	InitServerPort = 4840
)

var dayBoundaryRe = regexp.MustCompile(`^([01]?\d|2[0-3]):([0-5]\d)(?:\s+(\S+))?$`)

func decodeLimits(d *decoder, n *yaml.Node) Limits {
	l := Limits{DayBoundary: DefaultDayBoundary, dayLoc: time.UTC}
	f := d.fields(n, "limits", []string{"max_cost_per_day_usd", "max_cost_per_card_usd", "day_boundary"}, strict)
	for _, k := range []struct {
		key string
		dst *float64
	}{{"max_cost_per_day_usd", &l.MaxCostPerDayUSD}, {"max_cost_per_card_usd", &l.MaxCostPerCardUSD}} {
		if v, ok := f[k.key]; ok {
			if x, ok := d.number(v, "limits."+k.key); ok {
				if x < 0 {
					d.errf(deref(v), "limits."+k.key, "%v is negative; use 0 for no limit or a positive amount in USD", x)
				}
				*k.dst = x
			}
		}
	}
	if v, ok := f["day_boundary"]; ok {
		l.DayBoundary = strings.TrimSpace(d.str(v, "limits.day_boundary", expandPlain))
		m := dayBoundaryRe.FindStringSubmatch(l.DayBoundary)
		if m == nil {
			d.errf(deref(v), "limits.day_boundary", "%q is not a time of day; write HH:MM with an optional zone, e.g. \"00:00 UTC\" or \"06:00 Europe/Berlin\"", l.DayBoundary)
			return l
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		l.dayOffset = time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
		if m[3] != "" {
			loc, err := time.LoadLocation(m[3])
			if err != nil {
				d.errf(deref(v), "limits.day_boundary", "zone %q is unknown; use UTC or an IANA name such as America/New_York", m[3])
			} else {
				l.dayLoc = loc
			}
		}
	}
	return l
}

func decodeNotify(d *decoder, n *yaml.Node) Notify {
	nt := Notify{Slack: Slack{Events: append([]string(nil), DefaultSlackEvents...)}}
	f := d.fields(n, "notify", []string{"slack", "webhook", "allow_private"}, strict)
	if v, ok := f["slack"]; ok {
		sf := d.fields(v, "notify.slack", []string{"url", "events"}, strict)
		nt.Slack.URL = notifyURL(d, sf["url"], "notify.slack.url")
		if e, ok := sf["events"]; ok {
			nt.Slack.Events = notifyEvents(d, e, "notify.slack.events")
		}
	}
	if v, ok := f["webhook"]; ok {
		wf := d.fields(v, "notify.webhook", []string{"url", "secret", "events"}, strict)
		nt.Webhook.URL = notifyURL(d, wf["url"], "notify.webhook.url")
		nt.Webhook.Secret = d.str(wf["secret"], "notify.webhook.secret", expandSecret)
		if e, ok := wf["events"]; ok {
			nt.Webhook.Events = notifyEvents(d, e, "notify.webhook.events")
		}
	}
	if v, ok := f["allow_private"]; ok {
		nt.AllowPrivate = d.boolean(v, "notify.allow_private")
	}
	return nt
}

func notifyURL(d *decoder, n *yaml.Node, path string) string {
	s := d.str(n, path, expandSecret)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// Never echo the value: it is a secret.
		d.errf(deref(n), path, "is not an http(s) URL; set it to the full https://… address")
		return ""
	}
	return s
}

func notifyEvents(d *decoder, n *yaml.Node, path string) []string {
	evs := d.strList(n, path, expandPlain)
	for i, e := range evs {
		if !contains(NotifyEvents, e) {
			d.errf(deref(n), fmt.Sprintf("%s[%d]", path, i), "%q is not an event%s; use any of %s", e, suggest.DidYouMean(suggest.Closest(e, NotifyEvents)), strings.Join(NotifyEvents, ", "))
		}
	}
	return evs
}

var cleanupModes = []string{CleanupNever, CleanupOnDone, CleanupOnSink}

func decodeWorkspace(d *decoder, n *yaml.Node, baseDir string) Workspace {
	w := Workspace{Root: DefaultWorkspaceRoot, Cleanup: CleanupOnDone}
	f := d.fields(n, "workspace", []string{"root", "cleanup"}, lenient)
	if v, ok := f["root"]; ok {
		if s := d.str(v, "workspace.root", expandPlain); s != "" {
			w.Root = s
		}
	}
	w.Root = resolvePath(w.Root, baseDir)
	if v, ok := f["cleanup"]; ok {
		w.Cleanup = d.str(v, "workspace.cleanup", expandPlain)
		if !contains(cleanupModes, w.Cleanup) {
			d.errf(deref(v), "workspace.cleanup", "%q is not a cleanup mode; use never, on_done or on_sink (done, blocked or cancelled)", w.Cleanup)
		}
	}
	return w
}

func decodeHooks(d *decoder, n *yaml.Node) Hooks {
	h := Hooks{Timeout: DefaultHookTimeout}
	f := d.fields(n, "hooks", []string{"after_create", "before_run", "after_run", "before_remove", "timeout", "timeout_ms"}, lenient)
	h.AfterCreate = d.str(f["after_create"], "hooks.after_create", expandNone)
	h.BeforeRun = d.str(f["before_run"], "hooks.before_run", expandNone)
	h.AfterRun = d.str(f["after_run"], "hooks.after_run", expandNone)
	h.BeforeRemove = d.str(f["before_remove"], "hooks.before_remove", expandNone)
	h.Timeout = durationPair(d, f, "hooks", "timeout", "timeout_ms", h.Timeout)
	if h.Timeout == 0 {
		key := "timeout"
		if _, ok := f["timeout_ms"]; ok {
			key = "timeout_ms"
		}
		d.errf(deref(f[key]), "hooks."+key, "0 is not allowed; hooks need a time limit (e.g. 60s)")
		h.Timeout = DefaultHookTimeout
	}
	return h
}

// durationPair reads a drover duration key and its Symphony *_ms twin; giving
// both is an error.
func durationPair(d *decoder, f map[string]*yaml.Node, section, key, msKey string, def time.Duration) time.Duration {
	v, hasD := f[key]
	m, hasM := f[msKey]
	switch {
	case hasD && hasM:
		d.errf(deref(m), section+"."+msKey, "is set together with %s.%s; keep one", section, key)
	case hasD:
		if x, ok := d.duration(v, section+"."+key); ok {
			return x
		}
	case hasM:
		if x, ok := d.millis(m, section+"."+msKey); ok {
			return x
		}
	}
	return def
}

var dispatchKeys = []string{"node", "lease", "poll_interval", "max_concurrent", "max_concurrent_by_state", "max_turns", "max_retry_backoff"}

// decodeDispatch reads dispatch:, falling back to Symphony's polling: and
// agent: sections for the keys they share. Setting both is an error.
func decodeDispatch(d *decoder, n, polling, agentSec *yaml.Node) Dispatch {
	ds := Dispatch{Lease: DefaultLease, PollInterval: DefaultPollInterval, MaxConcurrent: DefaultMaxConcurrent, MaxTurns: DefaultMaxTurns, MaxRetryBackoff: DefaultMaxRetryWait}
	f := d.fields(n, "dispatch", dispatchKeys, strict)
	pf := d.fields(polling, "polling", []string{"interval_ms"}, lenient)
	af := d.fields(agentSec, "agent", []string{"max_concurrent_agents", "max_turns", "max_retry_backoff_ms", "max_concurrent_agents_by_state"}, lenient)
	pick := func(dk, sec, sk string) (*yaml.Node, string) {
		v, hasD := f[dk]
		var w *yaml.Node
		hasS := false
		if sec == "polling" {
			w, hasS = pf[sk]
		} else {
			w, hasS = af[sk]
		}
		switch {
		case hasD && hasS:
			d.errf(deref(w), sec+"."+sk, "is set together with dispatch.%s; keep one", dk)
			return v, "dispatch." + dk
		case hasS:
			return w, sec + "." + sk
		case hasD:
			return v, "dispatch." + dk
		}
		return nil, ""
	}
	if v, ok := f["node"]; ok {
		ds.Node = d.str(v, "dispatch.node", expandPlain)
	}
	if ds.Node == "" {
		ds.Node, _ = os.Hostname()
		if ds.Node == "" {
			ds.Node = "drover"
		}
	}
	if v, ok := f["lease"]; ok {
		ds.Lease = nonZero(d, v, "dispatch.lease", ds.Lease)
		if ds.Lease < 3*time.Second {
			d.errf(deref(v), "dispatch.lease", "%s is too short; use at least 3s (the heartbeat runs at a third of it)", ds.Lease)
		}
	}
	if v, p := pick("poll_interval", "polling", "interval_ms"); v != nil {
		var x time.Duration
		var ok bool
		if strings.HasSuffix(p, "_ms") {
			x, ok = d.millis(v, p)
		} else {
			x, ok = d.duration(v, p)
		}
		if ok && x < 100*time.Millisecond {
			d.errf(deref(v), p, "%s is too short; poll at most every 100ms", x)
		} else if ok {
			ds.PollInterval = x
		}
	}
	if v, p := pick("max_concurrent", "agent", "max_concurrent_agents"); v != nil {
		if x, ok := d.integer(v, p); ok && x < 1 {
			d.errf(deref(v), p, "%d is not allowed; use 1 or more", x)
		} else if ok {
			ds.MaxConcurrent = x
		}
	}
	if v, p := pick("max_turns", "agent", "max_turns"); v != nil {
		if x, ok := d.integer(v, p); ok && x < 1 {
			d.errf(deref(v), p, "%d is not allowed; use 1 or more", x)
		} else if ok {
			ds.MaxTurns = x
		}
	}
	if v, p := pick("max_retry_backoff", "agent", "max_retry_backoff_ms"); v != nil {
		var x time.Duration
		var ok bool
		if strings.HasSuffix(p, "_ms") {
			x, ok = d.millis(v, p)
		} else {
			x, ok = d.duration(v, p)
		}
		if ok {
			ds.MaxRetryBackoff = x
		}
	}
	if v, p := pick("max_concurrent_by_state", "agent", "max_concurrent_agents_by_state"); v != nil {
		ds.MaxConcurrentByState = map[string]int{}
		for _, e := range d.entries(v, p) {
			if x, ok := d.integer(e.val, p+"."+e.key); ok {
				if x < 1 {
					d.errf(deref(e.val), p+"."+e.key, "%d is not allowed; use 1 or more (move the state out of active_states to stop it)", x)
				}
				ds.MaxConcurrentByState[e.key] = x
			}
		}
	}
	return ds
}

var trackerKinds = []string{TrackerNative, TrackerGitHub, TrackerLinear}

func decodeTracker(d *decoder, n *yaml.Node, b board.Board) Tracker {
	t := Tracker{Kind: TrackerNative}
	f := d.fields(n, "tracker", []string{"kind", "endpoint", "api_key", "project_slug", "active_states", "terminal_states"}, lenient)
	if v, ok := f["kind"]; ok {
		t.Kind = d.str(v, "tracker.kind", expandPlain)
		if !contains(trackerKinds, t.Kind) {
			d.errf(deref(v), "tracker.kind", "%q is not a tracker%s; use native (drover's board), github or linear", t.Kind, suggest.DidYouMean(suggest.Closest(t.Kind, trackerKinds)))
		}
	}
	t.Endpoint = d.str(f["endpoint"], "tracker.endpoint", expandPlain)
	t.APIKey = d.str(f["api_key"], "tracker.api_key", expandSecret)
	t.ProjectSlug = d.str(f["project_slug"], "tracker.project_slug", expandPlain)
	t.ActiveStates = d.strList(f["active_states"], "tracker.active_states", expandPlain)
	t.TerminalStates = d.strList(f["terminal_states"], "tracker.terminal_states", expandPlain)
	if t.Kind == TrackerNative {
		if _, ok := f["active_states"]; !ok {
			t.ActiveStates = columnsWith(b, board.RoleEligible, board.RoleRunning)
		}
		if _, ok := f["terminal_states"]; !ok {
			t.TerminalStates = columnsWith(b, board.RoleDone, board.RoleCancelled)
		}
	}
	return t
}

func columnsWith(b board.Board, roles ...board.Role) []string {
	var out []string
	for _, c := range b.Columns {
		for _, r := range roles {
			if c.Role == r {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

func decodeStore(d *decoder, n *yaml.Node, baseDir string) Store {
	var s Store
	n = deref(n)
	if n != nil && n.Kind == yaml.MappingNode {
		f := d.fields(n, "store", []string{"dsn"}, strict)
		s.DSN = d.str(f["dsn"], "store.dsn", expandSecret)
	} else {
		s.DSN = d.str(n, "store", expandSecret)
	}
	if rest, ok := strings.CutPrefix(s.DSN, "sqlite:"); ok && rest != "" && !strings.HasPrefix(rest, "file:") && rest != ":memory:" {
		s.DSN = "sqlite:" + resolvePath(rest, baseDir)
	} else if s.DSN != "" && !strings.HasPrefix(s.DSN, "sqlite:") && !strings.HasPrefix(s.DSN, "postgres://") && !strings.HasPrefix(s.DSN, "postgresql://") {
		d.errf(n, "store", "is not a store address; use sqlite:PATH or postgres://USER@HOST/DB")
	}
	return s
}

func decodeServer(d *decoder, n *yaml.Node) Server {
	s := Server{Host: DefaultServerHost}
	f := d.fields(n, "server", []string{"host", "port", "auth_token"}, lenient)
	if v, ok := f["host"]; ok {
		if h := d.str(v, "server.host", expandPlain); h != "" {
			s.Host = h
		}
	}
	if v, ok := f["port"]; ok {
		if x, ok := d.integer(v, "server.port"); ok {
			if x < 0 || x > 65535 {
				d.errf(deref(v), "server.port", "%d is out of range; use 1-65535, or 0 to turn the server off", x)
			} else {
				s.Port = x
			}
		}
	}
	s.AuthToken = d.str(f["auth_token"], "server.auth_token", expandSecret)
	if s.Port != 0 && s.AuthToken == "" && !isLoopback(s.Host) {
		d.warnf("server.host", "%s is reachable from other machines and server.auth_token is empty: anyone who can reach it can move cards", s.Host)
	}
	return s
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

func decodeCodex(d *decoder, n *yaml.Node) Codex {
	var c Codex
	f := d.fields(n, "codex", []string{"command", "approval_policy", "thread_sandbox", "turn_sandbox_policy", "turn_timeout_ms", "read_timeout_ms", "stall_timeout_ms"}, lenient)
	c.Command = d.str(f["command"], "codex.command", expandNone)
	for _, k := range []string{"approval_policy", "thread_sandbox", "turn_sandbox_policy", "read_timeout_ms"} {
		if _, ok := f[k]; ok {
			d.ignored = append(d.ignored, "codex."+k)
			d.warnf("codex."+k, "not used: drover runs codex with `exec --json`; put flags in an agents.profiles entry's args")
		}
	}
	if v, ok := f["approval_policy"]; ok && deref(v).Kind == yaml.ScalarNode {
		c.ApprovalPolicy = deref(v).Value
	}
	if v, ok := f["thread_sandbox"]; ok && deref(v).Kind == yaml.ScalarNode {
		c.ThreadSandbox = deref(v).Value
	}
	if v, ok := f["turn_sandbox_policy"]; ok {
		var x any
		if deref(v).Decode(&x) == nil {
			c.TurnSandboxPolicy = jsonCompatible(x)
		}
	}
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"turn_timeout_ms", &c.TurnTimeout}, {"read_timeout_ms", &c.ReadTimeout}, {"stall_timeout_ms", &c.StallTimeout}} {
		if v, ok := f[k.key]; ok {
			*k.dst, _ = d.millis(v, "codex."+k.key)
		}
	}
	return c
}
