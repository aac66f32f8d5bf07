package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// opencodeEnv is an opencode profile's environment: a private HOME (so the
// operator's ~/.config/opencode is never read) and a run-private config
// file, named by OPENCODE_CONFIG, that makes the fake provider a custom
// OpenAI-compatible provider ("fake", through @ai-sdk/openai-compatible:
// Chat Completions at base/v1) and its model the default. The key comes
// from FAKE_OPENAI_API_KEY through opencode's {env:…} substitution, unset
// when auth is "none". OPENCODE_DISABLE_MODELS_FETCH and
// OPENCODE_DISABLE_AUTOUPDATE keep opencode off the internet (models.dev,
// its update check). opencode 1.18.33 has no setting for its own retries.
// extra adds top-level config keys.
func opencodeEnv(t *testing.T, home, base, auth string, extra map[string]any) []string {
	t.Helper()
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": base + "/v1", "apiKey": "{env:FAKE_OPENAI_API_KEY}"},
			"models":  map[string]any{"gpt-fake": map[string]any{"name": "Fake model", "cost": map[string]any{"input": 3, "output": 15}}},
		}},
		"model":      "fake/gpt-fake",
		"autoupdate": false,
		"share":      "disabled",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	path := filepath.Join(home, "opencode.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "OPENCODE_CONFIG=" + path, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1"}
	if auth != "none" {
		env = append(env, "FAKE_OPENAI_API_KEY=fake-key-not-secret")
	}
	return env
}

// stepsFor is what the fake provider answers scenario s with for c.
// opencode waits out a 429's retry-after five times, silently, before it
// reports it: the shared scenario's 40s would keep its cell quiet for over
// three minutes, so its rate limit says 8s (any wait shows the same).
func stepsFor(c cli, s scenario) []fp.Step {
	if c.kind == "opencode" && s.name == "rate_limit" {
		return []fp.Step{fp.RateLimit(8 * time.Second)}
	}
	return s.steps
}

// silentRetries are the CLI versions that retry a provider's 429, 402 and
// 5xx answers, and a stream cut mid-answer, without bound and print nothing
// while they do: opencode before its bounded retries of 1.18.x (1.3.2,
// 1.14.41 and 1.18.3 were each still retrying a 500 after 200s; 1.18.33
// reports it after five tries). drover sees a run that says nothing and
// never ends, which only its own timeout stops: those cells get a short
// timeout and expect that (a counted timeout), the truth drover can tell.
var silentRetries = map[string]bool{"opencode@1.3.2": true}

// retriedForever are the scenarios such a CLI retries without bound.
var retriedForever = []string{"rate_limit", "credit_balance", "usage_limit", "server_error", "unavailable", "overloaded", "reset_midstream"}

// forCLI is scenario s as c can play it.
func forCLI(c cli, s scenario) scenario {
	if silentRetries[c.kind+"@"+c.version] && contains(retriedForever, s.name) {
		s.timeout, s.want = "45s", retryKill("timeout")
	}
	return s
}

// TestOpencodeResume: a card whose opencode run stops at a permission the
// headless run rejected parks with the question; after `drover card
// answer` the next attempt continues the same session (run --session <id>)
// and its first request to the provider carries the earlier conversation
// (the card's prompt and the rejected tool call) with the answer as the
// newest user message.
func TestOpencodeResume(t *testing.T) {
	c := installed(t, "opencode")[0]
	p := fp.New(t)
	h := &harness{t: t, dir: t.TempDir()}
	s := scenario{name: "resume"}
	p.Script(marker(s), fp.ToolUse("bash", `{"command":"./deploy.sh","description":"deploy"}`), fp.Success("Deployed to staging."))
	home := filepath.Join(h.dir, "home-resume")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(opencodeEnv(t, home, p.URL(), "", map[string]any{"permission": map[string]any{"bash": "ask"}}),
		"PATH="+filepath.Dir(c.bin)+":/usr/local/bin:/usr/bin:/bin")
	var prof strings.Builder
	fmt.Fprintf(&prof, "default: s-resume\nprofiles:\n  s-resume:\n    kind: opencode\n    command: %s\n    timeout: 600s\n    stall_timeout: 600s\n    env:\n", c.bin)
	writeEnvYAML(&prof, env)
	testkit.NewWorkflow().Set("agents", prof.String()).
		Set("policy", "max_attempts: 3\nbackoff: {base: 10m, max: 10m, jitter: 0}").
		Set("dispatch", "max_concurrent: 1\npoll_interval: 500ms").Write(t, h.dir)
	var cd card
	h.jsonOf(&cd, "card", "add", "--title", marker(s)+": deploy it", "--state", "ready")
	h.serve()
	deadline := time.Now().Add(15 * time.Minute) // two opencode starts; minutes each on a loaded machine
	first := h.settled(cd.Identifier, deadline)
	if first.State != "awaiting_input" || first.Runs[0].Kind != "input_required" {
		t.Fatalf("first attempt: state %s (%s), run %+v\nlog:\n%s", first.State, first.StateReason, first.Runs[0], h.runLog(first))
	}
	var runs []struct {
		ID        string   `json:"id"`
		SessionID string   `json:"session_id"`
		Argv      []string `json:"argv"`
		Kind      string   `json:"kind"`
	}
	showRuns := func() {
		var v struct {
			State string `json:"state"`
			Runs  any    `json:"runs"`
		}
		h.jsonOf(&v, "card", "show", cd.Identifier)
		b, _ := json.Marshal(v.Runs)
		json.Unmarshal(b, &runs)
		cd.State = v.State
	}
	showRuns()
	session := runs[0].SessionID
	if !strings.HasPrefix(session, "ses_") {
		t.Fatalf("first run's session id %q, want opencode's ses_…", session)
	}
	if _, err := h.drover("card", "answer", cd.Identifier, "Yes, deploy to staging."); err != nil {
		t.Fatal(err)
	}
	for {
		showRuns()
		if len(runs) == 2 && runs[1].Kind != "" && cd.State != "in_progress" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered card did not run again: state %s, runs %+v", cd.State, runs)
		}
		time.Sleep(time.Second)
	}
	if argv := strings.Join(runs[1].Argv, " "); !strings.HasSuffix(argv, "run --format json --session "+session) {
		t.Errorf("second attempt ran %q, want it to continue session %s", argv, session)
	}
	if runs[1].SessionID != session || runs[1].Kind != "succeeded" || cd.State != "review" {
		t.Errorf("second attempt: session %q kind %s, card %s; want session %s, succeeded, review", runs[1].SessionID, runs[1].Kind, cd.State, session)
	}
	m := p.Marked(marker(s))
	if len(m) != 2 {
		t.Fatalf("%d requests of the card's conversation, want 2 (the tool call, the resumed turn): %s", len(m), requestLog(p, marker(s)))
	}
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   any             `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(m[1].Body), &req); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, msg := range req.Messages {
		roles = append(roles, msg.Role)
	}
	last := req.Messages[len(req.Messages)-1]
	lastText, _ := json.Marshal(last.Content)
	body := m[1].Body
	if last.Role != "user" || !strings.Contains(string(lastText), "Yes, deploy to staging.") ||
		!strings.Contains(body, marker(s)+": deploy it") || !strings.Contains(body, `./deploy.sh`) || !strings.Contains(body, `"role":"tool"`) {
		t.Errorf("the resumed run's first request (roles %v) lacks the earlier conversation or the answer:\n%s", roles, body)
	}
}
