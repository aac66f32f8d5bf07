package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

func TestGeminiCLI(t *testing.T) { matrix(t, "gemini") }

// geminiSettings is the run-private ~/.gemini/settings.json of a gemini
// profile (HOME is the scenario's own folder, never the operator's):
//   - security.auth.selectedType gemini-api-key: GOOGLE_GEMINI_BASE_URL
//     alone selects the "gateway" auth type, which headless mode refuses
//     ("Invalid auth method selected.", exit 41);
//   - general.maxAttempts 1: the CLI's own retries of 429, 5xx and fetch
//     failures (10 attempts, 5 s doubling to 30 s: minutes per run) stop
//     at the first failure, which then reaches drover;
//   - model.name: without a model the CLI first asks a router model
//     (generateContent, expecting JSON) which model to use, an extra call
//     per turn with retries of its own.
//   - model.maxSessionTurns, for a scenario with a turn limit: the CLI
//     has no flag for one, so drover cannot pass dispatch.max_turns on.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"maxAttempts": 1},
  "model": {"name": "gemini-2.5-flash", "maxSessionTurns": %d}
}
`

// geminiEnv is what a gemini profile sets: the private HOME with its
// settings, the endpoint and a dummy key (none for auth "none").
func (h *harness) geminiEnv(c cli, s scenario, home, base string) []string {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	turns := -1 // unlimited, the CLI's default
	if s.maxTurns > 0 {
		turns = s.maxTurns
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(fmt.Sprintf(geminiSettings, turns)), 0o644); err != nil {
		h.t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Dir(c.bin) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "GOOGLE_GEMINI_BASE_URL=" + base}
	if s.auth != "none" {
		env = append(env, "GEMINI_API_KEY=fake-key-not-secret")
	}
	return append(env, s.env...)
}

// TestGeminiResume: a gemini card parks, a human answers, and the next
// attempt continues the CLI's own session: drover runs it with --resume
// <the first run's session_id>, and the first request of the resumed run
// carries the earlier conversation (the first prompt and the model's
// question) and the answer.
//
// Headless Gemini CLI offers the model no ask_user tool, so nothing in its
// output says "question" by structure; the card parks through the
// profile's own match rule (kind input_required on the model's final line
// starting "QUESTION:"), a route every operator has today.
func TestGeminiResume(t *testing.T) {
	for _, c := range installed(t, "gemini") {
		t.Run(c.version, func(t *testing.T) {
			p := fp.New(t)
			h := &harness{t: t, dir: t.TempDir()}
			const m = "RCRESUME-gemini"
			const q = "QUESTION: deploy to staging or production?"
			p.Script(m, fp.Success(q), fp.Success("Deployed to staging."))
			s := scenario{name: "resume"}
			var prof strings.Builder
			fmt.Fprintf(&prof, "default: ask\nprofiles:\n  ask:\n    kind: gemini\n    command: %s\n    timeout: 300s\n    stall_timeout: 180s\n", c.bin)
			prof.WriteString("    match:\n      - {name: asks, regex: '\"role\":\"assistant\",\"content\":\"QUESTION: ', kind: input_required}\n    env:\n")
			writeEnvYAML(&prof, h.geminiEnv(c, s, filepath.Join(h.dir, "home"), p.URL()))
			testkit.NewWorkflow().Set("agents", prof.String()).
				Set("policy", "max_attempts: 3\nbackoff: {base: 10m, max: 10m, jitter: 0}").
				Set("dispatch", "max_concurrent: 1\npoll_interval: 500ms").Write(t, h.dir)
			var cd card
			h.jsonOf(&cd, "card", "add", "--title", m+": deploy the build", "--state", "ready")
			h.serve()
			deadline := time.Now().Add(5 * time.Minute)
			cd = h.settled(cd.Identifier, deadline)
			if cd.State != "awaiting_input" {
				t.Fatalf("card %s (%s), want awaiting_input\nrequests: %s\nlog:\n%s", cd.State, cd.StateReason, requestLog(p, m), h.runLog(cd))
			}
			first := h.sessionRuns(cd.Identifier)[0]
			if first.SessionID == "" {
				t.Fatalf("the parked run kept no session id: %+v", first)
			}
			before := len(p.Marked(m))
			if _, err := h.drover("card", "answer", cd.Identifier, "staging, please"); err != nil {
				t.Fatal(err)
			}
			var runs []sessionRun
			for {
				runs = h.sessionRuns(cd.Identifier)
				if len(runs) == 2 && runs[1].FinishedAt != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the answered card did not run again: %+v", runs)
				}
				time.Sleep(time.Second)
			}
			cd = h.settled(cd.Identifier, deadline)
			second := runs[1]
			if second.Kind != "succeeded" || cd.State != "review" {
				t.Errorf("resumed run %s, card %s (%s); want succeeded and review\nlog:\n%s", second.Kind, cd.State, cd.StateReason, h.runLog(cd))
			}
			if i := slices.Index(second.Argv, "--resume"); i < 0 || i+1 >= len(second.Argv) || second.Argv[i+1] != first.SessionID {
				t.Errorf("resumed run argv %q, want --resume %s", second.Argv, first.SessionID)
			}
			if second.SessionID != first.SessionID {
				t.Errorf("resumed run session %q, want the parked run's %q", second.SessionID, first.SessionID)
			}
			reqs := p.Marked(m)
			if len(reqs) <= before {
				t.Fatalf("the resumed run sent no request carrying the first prompt: %s", requestLog(p, m))
			}
			body := reqs[before].Body
			for _, want := range []string{m + ": deploy the build", `"role":"model"`, q, "staging, please"} {
				if !strings.Contains(body, want) {
					t.Errorf("the resumed run's first request lacks %q:\n%s", want, clip(body, 4000))
				}
			}
			if strings.Index(body, q) > strings.Index(body, "staging, please") {
				t.Errorf("the answer comes before the question in the resumed conversation")
			}
		})
	}
}

// sessionRun is a run with the fields the resume test reads.
type sessionRun struct {
	Attempt    int        `json:"attempt"`
	Kind       string     `json:"kind"`
	SessionID  string     `json:"session_id"`
	Argv       []string   `json:"argv"`
	FinishedAt *time.Time `json:"finished_at"`
}

// sessionRuns are the card's runs in attempt order.
func (h *harness) sessionRuns(id string) []sessionRun {
	h.t.Helper()
	out, err := h.drover("card", "show", id, "--json")
	if err != nil {
		h.t.Fatal(err)
	}
	var c struct {
		Runs []sessionRun `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		h.t.Fatal(err)
	}
	slices.SortFunc(c.Runs, func(a, b sessionRun) int { return a.Attempt - b.Attempt })
	return c.Runs
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
