package config

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/workspace"

	"github.com/drover-dev/drover/internal/tracker"
)

func parse(t *testing.T, src string) (*Config, error) {
	t.Helper()
	return Parse([]byte(src), "/srv/proj")
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := parse(t, src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func TestSymphonyWorkflowLoads(t *testing.T) {
	t.Setenv("LINEAR_API_KEY", "lin_api_secret")
	cfg, err := Load("testdata/symphony.md")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tracker.Kind != tracker.KindLinear || cfg.Tracker.APIKey != "lin_api_secret" || cfg.Tracker.ProjectSlug != "acme-platform-1a2b3c" {
		t.Errorf("tracker = %+v", cfg.Tracker)
	}
	if got := strings.Join(cfg.Tracker.ActiveStates, ","); got != "Todo,In Progress,Rework" {
		t.Errorf("active states = %q", got)
	}
	if cfg.Dispatch.PollInterval != 5*time.Second || cfg.Dispatch.MaxConcurrent != 10 || cfg.Dispatch.MaxTurns != 20 {
		t.Errorf("dispatch = %+v", cfg.Dispatch)
	}
	if cfg.Dispatch.MaxConcurrentByState["rework"] != 2 {
		t.Errorf("by state = %v", cfg.Dispatch.MaxConcurrentByState)
	}
	if cfg.Hooks.Timeout != 15*time.Minute || !strings.Contains(cfg.Hooks.AfterCreate, `"$SOURCE_REPO"`) || !strings.Contains(cfg.Hooks.AfterCreate, "${PWD##*/}") {
		t.Errorf("hooks must be kept verbatim: %+v", cfg.Hooks)
	}
	if !filepath.IsAbs(cfg.Workspace.Root) || strings.HasPrefix(cfg.Workspace.Root, "~") {
		t.Errorf("workspace root = %q", cfg.Workspace.Root)
	}
	if cfg.Server.Port != 4000 || cfg.Server.Host != "127.0.0.1" {
		t.Errorf("server = %+v", cfg.Server)
	}
	p, ok := cfg.Agents.Profiles["codex"]
	if !ok || cfg.Agents.Default != "codex" || p.Kind != "codex" || p.Command != "codex" || strings.Join(p.Args, " ") != "app-server" || p.ArgsMode != "replace" || p.Timeout != time.Hour || p.StallTimeout != 5*time.Minute {
		t.Errorf("codex profile = %+v (default %q)", p, cfg.Agents.Default)
	}
	// codex app-server: drover speaks its protocol with Symphony's settings.
	if tsp, _ := p.TurnSandboxPolicy.(map[string]any); p.ApprovalPolicy != "never" || p.ThreadSandbox != "workspace-write" || tsp["type"] != "workspaceWrite" {
		t.Errorf("codex app-server settings = %v, %q, %v", p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy)
	}
	if cfg.Policy.Backoff.Max != 5*time.Minute {
		t.Errorf("backoff max = %v", cfg.Policy.Backoff.Max)
	}
	if p.Model != "gpt-5" || slices.Contains(cfg.Ignored, "codex.model") {
		t.Errorf("codex.model: profile model %q, ignored %v", p.Model, cfg.Ignored)
	}
	for _, want := range []string{"codex.read_timeout_ms"} {
		found := false
		for _, k := range cfg.Ignored {
			found = found || k == want
		}
		if !found {
			t.Errorf("Ignored %v lacks %s", cfg.Ignored, want)
		}
	}
	for _, k := range cfg.Ignored {
		if strings.HasPrefix(k, "codex.") && slices.Contains([]string{"approval_policy", "thread_sandbox", "turn_sandbox_policy"}, strings.TrimPrefix(k, "codex.")) {
			t.Errorf("%s is applied in app-server mode, yet listed as ignored", k)
		}
	}
	if len(cfg.Warnings) < len(cfg.Ignored) {
		t.Errorf("each ignored key needs a warning: %v", cfg.Warnings)
	}
	out, err := cfg.RenderPrompt(board.Card{Identifier: "DRV-7", Title: "Fix login", Body: "It breaks.", State: "Todo", Labels: []string{"bug", "auth"}}, 2, "r1", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`DRV-7`", "attempt #2", "Labels: bug, auth", "It breaks.", "URL: http://127.0.0.1:4000/api/v1/DRV-7"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(cfg.String(), "lin_api_secret") {
		t.Error("String() leaks the tracker API key")
	}
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, "---\n---\n")
	if cfg.Board.Prefix != "DRV" || len(cfg.Board.Columns) != 8 {
		t.Errorf("board = %+v", cfg.Board)
	}
	if cfg.Agents.Default != "sim" || cfg.Agents.Profiles["sim"].Kind != "sim" {
		t.Errorf("agents = %+v", cfg.Agents)
	}
	pc := cfg.Policy
	if pc.MaxAttempts != 10 || pc.FailedState != "blocked" || pc.Backoff != (policy.Backoff{Base: 10 * time.Second, Max: 5 * time.Minute, Jitter: 0.1}) || pc.ReleaseChurnCap != 5 || pc.ContinuationCap != 3 {
		t.Errorf("policy = %+v", pc)
	}
	if n := pc.Kinds[policy.KindNetwork]; *n.Cap != 3 || len(n.Tiers) != 3 || n.Tiers[2] != 15*time.Minute {
		t.Errorf("network = %+v", n)
	}
	if *pc.Kinds[policy.KindProviderUnavailable].Cap != 10 || *pc.Kinds[policy.KindInterrupted].Cap != 3 || *pc.Kinds[policy.KindWorkspaceSetup].Cap != 3 {
		t.Errorf("kind caps = %+v", pc.Kinds)
	}
	if pc.BreakerThreshold != 5 || pc.BreakerWindow != 5*time.Minute || pc.BreakerCooldown != time.Minute {
		t.Errorf("breaker = %+v", pc)
	}
	if cfg.Workspace.Root != "/srv/proj/.drover/workspaces" || cfg.Workspace.Cleanup != workspace.CleanupOnDone {
		t.Errorf("workspace = %+v", cfg.Workspace)
	}
	d := cfg.Dispatch
	if d.Node == "" || d.Lease != 30*time.Second || d.PollInterval != 5*time.Second || d.MaxConcurrent != 4 {
		t.Errorf("dispatch = %+v", d)
	}
	if cfg.Hooks.Timeout != time.Minute || cfg.Server.Host != "127.0.0.1" || cfg.Server.Port != 0 || cfg.Store.DSN != "" {
		t.Errorf("hooks/server/store = %+v %+v %+v", cfg.Hooks, cfg.Server, cfg.Store)
	}
	if cfg.Tracker.Kind != tracker.KindNative || strings.Join(cfg.Tracker.ActiveStates, ",") != "ready,in_progress" || strings.Join(cfg.Tracker.TerminalStates, ",") != "done,cancelled" {
		t.Errorf("tracker = %+v", cfg.Tracker)
	}
	if cfg.Prompt != prompt.DefaultPrompt {
		t.Error("empty body should use DefaultPrompt")
	}
	out, err := cfg.RenderPrompt(board.Card{Identifier: "DRV-1", Title: "Add a flag"}, 1, "r", "/w/DRV-1")
	if err != nil || !strings.Contains(out, "DRV-1: Add a flag") || !strings.Contains(out, "work from its title") || strings.Contains(out, "attempt 1") {
		t.Errorf("default prompt render = %q, %v", out, err)
	}
}

func TestInitTemplateParses(t *testing.T) {
	cfg := mustParse(t, InitTemplate)
	if len(cfg.Warnings) != 0 || len(cfg.Ignored) != 0 {
		t.Errorf("init template has warnings: %v", cfg.Warnings)
	}
	if cfg.Server.Port != 4840 || cfg.Server.Host != "127.0.0.1" || cfg.Agents.Default != "sim" {
		t.Errorf("server/agents = %+v %+v", cfg.Server, cfg.Agents)
	}
	def := policy.Defaults()
	b1, _ := json.Marshal(cfg.Policy)
	b2, _ := json.Marshal(def)
	if string(b1) != string(b2) {
		t.Errorf("init template policy differs from the defaults:\n%s\n%s", b1, b2)
	}
	if _, err := cfg.RenderPrompt(board.Card{Identifier: "DRV-1", Title: "t", Body: "b"}, 3, "r", "/w"); err != nil {
		t.Error(err)
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Setenv("DROVER_T_ROOT", "/data/ws")
	t.Setenv("DROVER_T_HOOK", "https://hooks.slack.test/T0/B0/xyz")
	t.Setenv("DROVER_T_TOKEN", "tok-123")
	t.Setenv("DROVER_T_EMPTY", "")
	cfg := mustParse(t, `---
workspace: {root: "${DROVER_T_ROOT}/cards"}
notify:
  slack: {url: $DROVER_T_HOOK}
  webhook: {url: $DROVER_T_UNSET_URL, secret: $DROVER_T_EMPTY}
server: {port: 4840, auth_token: $DROVER_T_TOKEN}
agents:
  profiles:
    sh: {kind: command, command: "$$HOME/bin/agent", env: {TOKEN: $DROVER_T_TOKEN}}
hooks: {before_run: "echo $DROVER_T_ROOT"}
---
hi
`)
	if cfg.Workspace.Root != "/data/ws/cards" {
		t.Errorf("root = %q", cfg.Workspace.Root)
	}
	if cfg.Notify.Slack.URL != "https://hooks.slack.test/T0/B0/xyz" || cfg.Server.AuthToken != "tok-123" || cfg.Agents.Profiles["sh"].Env["TOKEN"] != "tok-123" {
		t.Errorf("expanded secrets wrong: %+v %+v", cfg.Notify, cfg.Server)
	}
	if cfg.Agents.Profiles["sh"].Command != "$HOME/bin/agent" {
		t.Errorf("$$ should be a literal $: %q", cfg.Agents.Profiles["sh"].Command)
	}
	if cfg.Hooks.BeforeRun != "echo $DROVER_T_ROOT" {
		t.Errorf("hooks must not be expanded: %q", cfg.Hooks.BeforeRun)
	}
	if cfg.Notify.Webhook.URL != "" {
		t.Errorf("unset secret should be empty, got %q", cfg.Notify.Webhook.URL)
	}
	warned := strings.Join(cfg.Warnings, "\n")
	if !strings.Contains(warned, "notify.webhook.url: $DROVER_T_UNSET_URL is not set") || !strings.Contains(warned, "notify.webhook.secret") {
		t.Errorf("warnings = %v", cfg.Warnings)
	}
	s := cfg.String()
	for _, secret := range []string{"xyz", "tok-123"} {
		if strings.Contains(s, secret) || strings.Contains(warned, secret) {
			t.Errorf("secret %q leaked", secret)
		}
	}
	if r := cfg.Redacted(); r.Agents.Profiles["sh"].Env["TOKEN"] != "****" || cfg.Agents.Profiles["sh"].Env["TOKEN"] != "tok-123" {
		t.Error("Redacted must mask env values without touching the original")
	}
	// An unset variable in a non-secret value is an error naming it.
	_, err := parse(t, "---\nworkspace: {root: $DROVER_T_NOPE}\n---\n")
	if err == nil || !strings.Contains(err.Error(), "workspace.root") || !strings.Contains(err.Error(), "$DROVER_T_NOPE") {
		t.Errorf("err = %v", err)
	}
}

func TestDayBoundary(t *testing.T) {
	cfg := mustParse(t, "---\nlimits: {day_boundary: \"06:30 UTC\", max_cost_per_day_usd: 20, estimated_cost_per_run_usd: 0.5}\n---\n")
	if cfg.Limits.EstimatedCostPerRunUSD != 0.5 {
		t.Errorf("estimated_cost_per_run_usd = %v", cfg.Limits.EstimatedCostPerRunUSD)
	}
	berlin := mustParse(t, "---\nlimits: {day_boundary: \"00:00 Europe/Berlin\"}\n---\n")
	loc, _ := time.LoadLocation("Europe/Berlin")
	// 2025-03-30 has 23 hours in Berlin, 2025-10-26 has 25.
	for _, day := range []int{30, 31} {
		at := time.Date(2025, 3, day-1, 12, 0, 0, 0, loc)
		if got := berlin.Limits.DayBoundary.Next(at); !got.Equal(time.Date(2025, 3, day, 0, 0, 0, 0, loc)) {
			t.Errorf("NextDayStart(%v) = %v", at, got)
		}
	}
	if at := time.Date(2025, 10, 26, 1, 0, 0, 0, loc); !berlin.Limits.DayBoundary.Next(at).Equal(time.Date(2025, 10, 27, 0, 0, 0, 0, loc)) {
		t.Errorf("NextDayStart(%v) = %v", at, berlin.Limits.DayBoundary.Next(at))
	}
	at := time.Date(2025, 3, 10, 5, 0, 0, 0, time.UTC)
	if got := cfg.Limits.DayBoundary.Start(at); !got.Equal(time.Date(2025, 3, 9, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("DayStart = %v", got)
	}
	if got := cfg.Limits.DayBoundary.Start(at.Add(2 * time.Hour)); !got.Equal(time.Date(2025, 3, 10, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("DayStart = %v", got)
	}
}

func TestSpecSchema(t *testing.T) {
	cfg := mustParse(t, `---
agents:
  default: script
  profiles:
    script:
      kind: command
      command: ./agent.sh
      spec_schema: {type: object, required: [plan], properties: {plan: {type: string, minLength: 1}}}
---
{{ card.spec.plan }}
`)
	sch := cfg.SpecSchema("")
	if sch == nil || cfg.SpecSchema("script") != sch {
		t.Fatal("no compiled schema")
	}
	if err := sch.Validate(map[string]any{"plan": "do it"}); err != nil {
		t.Error(err)
	}
	if err := sch.Validate(map[string]any{}); err == nil {
		t.Error("missing plan should fail the schema")
	}
	if cfg.SpecSchema("nope") != nil {
		t.Error("unknown profile has no schema")
	}
}

func TestRenderMissingSpecField(t *testing.T) {
	cfg := mustParse(t, "---\n---\nTitle: {{ card.title }}\n\nPlan: {{ card.spec.plan }}\n{% if card.spec.notes %}{{ card.spec.notes }}{% endif %}\n")
	out, err := cfg.RenderPrompt(board.Card{Title: "T", Spec: json.RawMessage(`{"plan":"step 1"}`)}, 1, "r", "/w")
	if err != nil || !strings.Contains(out, "Plan: step 1") {
		t.Fatalf("render = %q, %v", out, err)
	}
	_, err = cfg.RenderPrompt(board.Card{Title: "T", Spec: json.RawMessage(`{}`)}, 1, "r", "/w")
	var re *prompt.RenderError
	if !errors.As(err, &re) {
		t.Fatalf("want *RenderError, got %v", err)
	}
	if re.Variable != "card.spec.plan" || re.Line != 5 || !strings.Contains(err.Error(), "card.spec.plan") {
		t.Errorf("RenderError = %+v (%v)", re, err)
	}
}

func TestRedactedMasksTheStorePassword(t *testing.T) {
	cfg := mustParse(t, "---\nstore: {dsn: 'postgres://drover:s3cret@db/drover'}\n---\n")
	if got := cfg.Redacted().Store.DSN; got != "postgres://drover:****@db/drover" {
		t.Errorf("Redacted().Store.DSN = %q", got)
	}
	if cfg.Store.DSN != "postgres://drover:s3cret@db/drover" {
		t.Errorf("Redacted changed the original: %q", cfg.Store.DSN)
	}
}

// TestProfileResume: resume defaults to auto and takes never.
func TestProfileResume(t *testing.T) {
	cfg := mustParse(t, "---\nagents:\n  default: a\n  profiles:\n    a: {kind: claude}\n    b: {kind: codex, resume: never}\n---\n")
	if got := cfg.Agents.Profiles["a"].Resume; got != "auto" {
		t.Errorf("a.resume = %q, want auto", got)
	}
	if got := cfg.Agents.Profiles["b"].Resume; got != "never" {
		t.Errorf("b.resume = %q, want never", got)
	}
}

// drover init --tracker writes a file that loads as is (without the key in
// the environment: serve asks for it, not load) and names the tracker.
func TestInitTemplateForTrackers(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("LINEAR_API_KEY", "")
	for _, kind := range []string{tracker.KindGitHub, tracker.KindLinear} {
		src, err := InitTemplateFor(kind)
		if err != nil {
			t.Fatal(err)
		}
		// The section goes after the board; the rest is drover init's own file.
		sec := readTemplate("tracker-" + kind + ".yaml")
		if i := strings.Index(src, sec); i < 0 || i > strings.Index(src, "# Agent profiles.") || strings.Replace(src, sec, "", 1) != InitTemplate {
			t.Errorf("%s: the tracker section is not InitTemplate's only addition, before the agents", kind)
		}
		cfg := mustParse(t, src)
		if cfg.Tracker.Kind != kind || !cfg.Tracker.External() {
			t.Errorf("%s: tracker = %+v", kind, cfg.Tracker)
		}
		// Not every issue of the repository or project: those labelled drover.
		if strings.Join(cfg.Tracker.RequiredLabels, ",") != "drover" {
			t.Errorf("%s: required_labels = %q, want [drover]", kind, cfg.Tracker.RequiredLabels)
		}
		if err := cfg.Tracker.Ready(); err == nil || !strings.Contains(err.Error(), "tracker.api_key") {
			t.Errorf("%s: Ready without a key = %v, want the key named", kind, err)
		}
	}
	if _, err := InitTemplateFor("jira"); err == nil || !strings.Contains(err.Error(), "github or linear") {
		t.Errorf("jira: %v", err)
	}
}

// TestRoutesAndFallbacks: label routes, fallback chains, takes_fallback,
// max_concurrent and the opt-out label load as written, with their defaults.
func TestRoutesAndFallbacks(t *testing.T) {
	cfg := mustParse(t, `---
agents:
  default: claude
  profiles:
    claude: {kind: claude, fallback: [codex, gemini], max_concurrent: 4}
    codex: {kind: codex}
    gemini: {kind: gemini}
    solo: {kind: sim, takes_fallback: false}
  routes:
    - {labels: [docs], profile: gemini}
---
prompt`)
	a := cfg.Agents
	if got := a.Fallback["claude"]; len(got) != 2 || got[0] != "codex" || got[1] != "gemini" {
		t.Errorf("fallback %v, want [codex gemini]", got)
	}
	if !a.TakesNoFallback["solo"] || len(a.TakesNoFallback) != 1 {
		t.Errorf("takes no fallback %v, want solo only", a.TakesNoFallback)
	}
	if a.MaxConcurrent["claude"] != 4 || len(a.MaxConcurrent) != 1 {
		t.Errorf("max_concurrent %v, want claude: 4", a.MaxConcurrent)
	}
	if len(a.Routes) != 1 || a.Routes[0].Profile != "gemini" || a.Routes[0].Labels[0] != "docs" {
		t.Errorf("routes %+v", a.Routes)
	}
	if a.NoFallbackLabel != "no-fallback" || len(cfg.Ignored) != 0 {
		t.Errorf("no_fallback_label %q (ignored %v), want the default and nothing ignored", a.NoFallbackLabel, cfg.Ignored)
	}
}
