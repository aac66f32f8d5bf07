package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
)

// TestCodexSymphonyModel: Symphony's codex.model and codex.reasoning_effort
// reach the model provider's requests through the real Codex CLI, in exec
// mode (-m and -c flags) and in app-server mode (thread/start model,
// turn/start effort). Before issue 25 they were ignored with a warning and
// the requests carried config.toml's model.
func TestCodexSymphonyModel(t *testing.T) {
	for _, c := range installed(t, "codex") {
		for _, mode := range []string{"exec --json --skip-git-repo-check", "app-server"} {
			t.Run(c.version+"/"+mode[:4], func(t *testing.T) { codexModelRun(t, c, mode) })
		}
	}
}

func codexModelRun(t *testing.T, c cli, mode string) {
	s := scenario{name: "symphony-model"}
	p := fp.New(t)
	p.Script(marker(s), fp.Success("Done."))
	h := &harness{t: t, dir: t.TempDir()}
	codexHome := filepath.Join(h.dir, "codex-home")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("model = \"gpt-fake\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n\n"+
		"[model_providers.fake]\nname = \"Fake\"\nbase_url = %q\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"+
		"request_max_retries = 0\nstream_max_retries = 0\n", p.URL()+"/v1")
	wf := fmt.Sprintf("---\ncodex:\n  command: %s %s\n  model: gpt-symphony-model\n  reasoning_effort: high\n  turn_timeout_ms: 300000\n"+
		"dispatch:\n  max_concurrent: 1\n  poll_interval: 500ms\n---\nDo the task: {{ issue.title }}\n", c.bin, mode)
	for name, body := range map[string]string{filepath.Join(codexHome, "config.toml"): toml, filepath.Join(h.dir, "WORKFLOW.md"): wf} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.env = []string{"HOME=" + h.dir, "CODEX_HOME=" + codexHome, "OPENAI_API_KEY=fake-key-not-secret",
		"PATH=" + filepath.Dir(c.bin) + ":/usr/local/bin:/usr/bin:/bin"}
	var cd card
	h.jsonOf(&cd, "card", "add", "--title", marker(s)+": a task", "--state", "ready")
	h.serve()
	done := h.settled(cd.Identifier, time.Now().Add(5*time.Minute))
	reqs := p.Marked(marker(s))
	if len(reqs) == 0 {
		t.Fatalf("no request reached the provider: state %s (%s)\nlog:\n%s", done.State, done.StateReason, h.runLog(done))
	}
	var body struct {
		Model     string `json:"model"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal([]byte(reqs[0].Body), &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if body.Model != "gpt-symphony-model" || body.Reasoning.Effort != "high" {
		t.Errorf("the provider was asked for model %q effort %q; want gpt-symphony-model, high (codex.model, codex.reasoning_effort)\nlog:\n%s",
			body.Model, body.Reasoning.Effort, h.runLog(done))
	}
}
