package realcli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	fp "github.com/drover-dev/drover/internal/testkit/fakeprovider"
	lfake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
)

// symphonyWorkflow is Symphony's own elixir/WORKFLOW.md, byte for byte.
const symphonyWorkflow = "../../internal/tracker/linear/testdata/symphony-elixir-WORKFLOW.md"

// TestSymphonyWorkflowServesLinear is issue 12's last "Done when": drover
// serve with Symphony's elixir/WORKFLOW.md unchanged dispatches from the
// Linear fake with the real Codex CLI in app-server mode. Everything the
// file leaves to the environment comes from it, as for a Symphony user:
// $LINEAR_API_KEY (no api_key in the file), `codex` and `git` on PATH
// (codex.command and the after_create hook name them bare), HOME (the
// workspace root is ~/code/…), CODEX_HOME (its config.toml names the fake
// model provider). The file names no tracker endpoint, so drover calls
// https://api.linear.app/graphql; HTTPS_PROXY and SSL_CERT_FILE lead that
// to the fake (the stock way to point a Go program elsewhere). The hook's
// `git clone` of github.com cannot reach a fake inside the namespace, so
// `git` is a stand-in that clones nothing.
//
// The issue goes Todo → In Progress; the model asks a question
// (request_user_input), which drover writes on the issue as a comment; a
// person's reply resumes the thread, the model calls drover_done, and the
// issue goes to In Review. The keys drover does not use are logged once
// each and serve keeps running.
func TestSymphonyWorkflowServesLinear(t *testing.T) {
	for _, c := range installed(t, "codex") {
		t.Run(c.version, func(t *testing.T) { symphonyRun(t, c) })
	}
}

func symphonyRun(t *testing.T, c cli) {
	const question = "Which page is slow: the board or the card view?"
	s := scenario{name: "symphony"}
	p := fp.New(t)
	p.Script(marker(s),
		fp.ToolUse("request_user_input", `{"questions":[{"id":"page","header":"Page","question":"`+question+`","options":[{"label":"board","description":"the board page"},{"label":"card","description":"the card view"}]}]}`),
		fp.ToolUse("drover_done", `{"summary":"Cached the board query; the board page loads in 300ms."}`),
		fp.Success("Cached the board query."),
	)
	ln := lfake.New("symphony-0c79b11b75ea") // the file's project_slug
	ln.APIKey = "lin_api_symphony"
	t.Cleanup(ln.Close)
	id := ln.AddIssue(marker(s)+": make the dashboard faster", "The board page takes 3s.", "Todo")
	idle := ln.AddIssue("Someday", "", "Backlog")
	proxy := newHTTPSProxy(t, "api.linear.app", ln.URL)

	h := &harness{t: t, dir: t.TempDir()}
	raw, err := os.ReadFile(symphonyWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "WORKFLOW.md"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	home, codexHome, bin := filepath.Join(h.dir, "home"), filepath.Join(h.dir, "codex-home"), filepath.Join(h.dir, "bin")
	for _, d := range []string{home, codexHome, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(c.bin, filepath.Join(bin, "codex")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\n# the after_create hook's clone: nothing to reach here\nmkdir -p elixir\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`model_provider = "fake"

[model_providers.fake]
name = "Fake"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 300000
`, p.URL()+"/v1")
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "OPENAI_API_KEY=fake-key-not-secret",
		"PATH=" + bin + ":" + filepath.Dir(c.bin) + ":/usr/local/bin:/usr/bin:/bin",
		"LINEAR_API_KEY=lin_api_symphony",
		"HTTPS_PROXY=" + proxy.URL, "https_proxy=" + proxy.URL, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"SSL_CERT_FILE=" + proxy.CAFile}
	h.serve()
	deadline := time.Now().Add(10 * time.Minute)
	wait := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen\nlinear: %v\nissue: %+v\nrequests: %s\nproxy: %v", what, ln.Log(), ln.Issue(id), requestLog(p, marker(s)), proxy.Hosts())
			}
			time.Sleep(time.Second)
		}
	}
	wait("the question as a comment on the issue", func() bool { return len(ln.Comments(id)) == 1 })
	asked := ln.Comments(id)[0].Body
	if !strings.Contains(asked, question) {
		t.Errorf("drover's comment does not carry the question %q:\n%s", question, asked)
	}
	if st := ln.Issue(id).State; st != "In Progress" {
		t.Errorf("while the question waits the issue is %q, want In Progress (Linear has no parked state by default)", st)
	}
	ln.PersonComments(id, "Ada", "The board page.")
	wait("the issue in review", func() bool { return ln.Issue(id).State == "In Review" })

	// Consecutive moves to the same state collapse: the resumed run's claim
	// writes In Progress again, which Linear takes as a no-op.
	var moves []string
	comments := 0
	for _, r := range ln.Log() {
		switch {
		case r.Op == "DroverMove" && r.Vars["id"] == id:
			if m := fmt.Sprint(r.Vars["stateId"]); len(moves) == 0 || moves[len(moves)-1] != m {
				moves = append(moves, m)
			}
		case r.Op == "DroverMove" || r.Op == "DroverComment" && r.Vars["issueId"] != id:
			t.Errorf("the Backlog issue %s or another was written to: %v %v", idle, r.Op, r.Vars)
		case r.Op == "DroverComment":
			comments++
		}
	}
	// The fake's states: state-3 In Progress, state-4 In Review.
	if !slices.Equal(moves, []string{"state-3", "state-4"}) {
		t.Errorf("the issue's moves = %v, want [state-3 state-4] (Todo → In Progress → In Review)", moves)
	}
	if comments != 1 {
		t.Errorf("%d comments written, want 1 (the question)", comments)
	}
	if hosts := proxy.Hosts(); !slices.Contains(hosts, "CONNECT api.linear.app:443") {
		t.Errorf("drover did not call Linear's own endpoint through the proxy: %v", hosts)
	} else {
		t.Logf("asked of the proxy: %v", hosts)
	}
	reqs := p.Marked(marker(s))
	if len(reqs) != 3 {
		t.Errorf("%d model requests, want 3 (the question, drover_done, the end):%s", len(reqs), requestLog(p, marker(s)))
	} else if !strings.Contains(reqs[1].Body, "The board page.") {
		t.Errorf("the answer's turn does not carry the person's reply")
	}
	if reqs := p.Marked(marker(s)); len(reqs) > 0 && !strings.Contains(reqs[0].Body, "You are working on a Linear ticket `ENG-1`") {
		b := reqs[0].Body
		if i := strings.Index(b, "Linear ticket"); i >= 0 {
			b = b[max(0, i-200):min(len(b), i+400)]
		}
		t.Errorf("the first request does not carry Symphony's prompt rendered for ENG-1: %.1500s", b)
	}

	var cards []struct {
		Identifier string `json:"identifier"`
		Title      string `json:"title"`
		State      string `json:"state"`
	}
	h.jsonOf(&cards, "card", "ls")
	if len(cards) != 1 || cards[0].State != "review" {
		t.Errorf("cards = %+v, want the Todo issue's card only, in review", cards)
	}
	if err := h.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("drover serve is not running: %v", err)
	}
	_ = h.cmd.Process.Signal(os.Interrupt)
	_ = h.cmd.Wait() // the log is whole once serve has stopped
	log := h.log.String()
	warned := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, "config: "); i >= 0 && strings.Contains(line, "WARN") {
			warned[line[i:]]++
		}
	}
	// Since app-server mode (issue 11) drover reads every key of this file,
	// codex's approval_policy and sandboxes included, so it reports none;
	// internal/tracker/linear's TestSymphonyWorkflowDispatchesFromLinear
	// checks that a Symphony key drover does not read is reported once.
	for w, n := range warned {
		t.Errorf("reported %d times: %s (drover reads every key of Symphony's file)", n, w)
	}
}
