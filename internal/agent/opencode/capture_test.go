package opencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// captureEnv names the opencode binary TestCapture runs. Unset, it skips:
//
//	DROVER_CAPTURE_OPENCODE=$(command -v opencode) go test ./internal/agent/opencode -run TestCapture -parallel 16 -v
//
// Each scenario runs the real CLI against a fake OpenAI-compatible API
// (chat completions, SSE) on 127.0.0.1, configured as a custom provider
// through OPENCODE_CONFIG_CONTENT, and rewrites
// testdata/<scenario>/{stdout,stderr,exit_code,cmd,expected.json}.
const captureEnv = "DROVER_CAPTURE_OPENCODE"

type scenario struct {
	name, kind, notes string
	alt               []string
	// status and body answer every request; status 0 = the SSE in body.
	status  int
	body    string
	headers map[string]string
	// refused: nothing listens on the port. noKey: the provider has no key.
	refused, noKey bool
	// tool: the first agent request is answered with toolCall, the one
	// that carries the tool's result with body.
	tool bool
	// dns: the base URL's host does not resolve (.invalid never does).
	dns bool
	// askBash: the config makes bash ask for permission, which a headless
	// run rejects.
	askBash bool
	// reset: the stream's first chunk, then the connection is reset.
	reset bool
}

// toolCall asks opencode to run a shell command (bash is allowed by default).
var toolCall = sse(fmt.Sprintf(chunk, `{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo drover-tool-ok\",\"description\":\"print a word\"}"}}]}`, "null", ""),
	fmt.Sprintf(chunk, `{}`, `"tool_calls"`, `,"usage":{"prompt_tokens":1000,"completion_tokens":20,"total_tokens":1020}`))

func openaiError(typ, code, msg string) string {
	b, _ := json.Marshal(msg)
	c := "null"
	if code != "" {
		c = strconv.Quote(code)
	}
	return fmt.Sprintf(`{"error":{"message":%s,"type":%q,"param":null,"code":%s}}`, b, typ, c)
}

func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

const chunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796000000,"model":"fake-model","choices":[{"index":0,"delta":%s,"finish_reason":%s}]%s}`

var scenarios = []scenario{
	{name: "success", kind: "succeeded", notes: "Text in two chunks, finish_reason stop, usage 900 in / 7 out; the config prices the model, so opencode reports a cost.",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":"Hello"}`, "null", ""),
			fmt.Sprintf(chunk, `{"content":" there, all done."}`, "null", ""),
			fmt.Sprintf(chunk, `{}`, `"stop"`, `,"usage":{"prompt_tokens":900,"completion_tokens":7,"total_tokens":907}`))},
	{name: "tool_call", kind: "succeeded", tool: true, notes: "The model runs `echo drover-tool-ok` (bash), then answers with text; two priced steps.",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":"The command printed drover-tool-ok."}`, "null", ""),
			fmt.Sprintf(chunk, `{}`, `"stop"`, `,"usage":{"prompt_tokens":1100,"completion_tokens":9,"total_tokens":1109}`))},
	{name: "max_output_tokens", kind: "agent_failed", alt: []string{"unknown"}, notes: "The answer stops at the output limit: finish_reason length.",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":"Here is the start of a very long"}`, "null", ""),
			fmt.Sprintf(chunk, `{}`, `"length"`, `,"usage":{"prompt_tokens":900,"completion_tokens":32000,"total_tokens":32900}`))},
	{name: "refusal", kind: "refused", alt: []string{"unknown"}, notes: "OpenAI's refusal shape: finish_reason content_filter, no text.",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":""}`, `"content_filter"`, `,"usage":{"prompt_tokens":900,"completion_tokens":0,"total_tokens":900}`))},
	{name: "rate_limit_429", kind: "rate_limited", notes: "Every request: 429 rate_limit_exceeded with retry-after: 2.",
		status: 429, headers: map[string]string{"retry-after": "2"},
		body: openaiError("requests", "rate_limit_exceeded", "Rate limit reached for fake-model in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 2s.")},
	{name: "quota_429", kind: "quota_exhausted", notes: "429 insufficient_quota: the account is out of credit.",
		status: 429, body: openaiError("insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.")},
	{name: "billing_402", kind: "quota_exhausted", notes: "402 from a gateway that bills per request.",
		status: 402, body: openaiError("insufficient_credits", "", "Insufficient credits. Add more using https://example.invalid/credits")},
	{name: "auth_401", kind: "auth_failed", notes: "401 invalid_api_key.",
		status: 401, body: openaiError("invalid_request_error", "invalid_api_key", "Incorrect API key provided: fake-key***. You can find your API key at https://platform.openai.com/account/api-keys.")},
	{name: "permission_403", kind: "permission_denied", alt: []string{"auth_failed"}, notes: "403: the key may not use the model.",
		status: 403, body: openaiError("invalid_request_error", "model_not_allowed", "Project proj_fake does not have access to model fake-model")},
	{name: "server_500", kind: "provider_unavailable", notes: "Every request: 500 server_error.",
		status: 500, body: openaiError("server_error", "", "The server had an error while processing your request. Sorry about that!")},
	{name: "overloaded_503", kind: "provider_unavailable", notes: "Every request: 503 'Selected model is at capacity'.",
		status: 503, body: openaiError("server_error", "", "Selected model is at capacity. Please try a different model.")},
	{name: "context_too_long", kind: "context_exhausted", notes: "400 context_length_exceeded.",
		status: 400, body: openaiError("invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130211 tokens. Please reduce the length of the messages.")},
	{name: "permission_rejected", kind: "input_required", tool: true, askBash: true,
		notes: "The config makes bash ask (permission.bash: ask); the model calls bash, `opencode run` rejects the ask, and the run stops with exit 0 and no answer.",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":"Not reached."}`, "null", ""),
			fmt.Sprintf(chunk, `{}`, `"stop"`, `,"usage":{"prompt_tokens":1100,"completion_tokens":9,"total_tokens":1109}`))},
	{name: "reset_midstream", kind: "network", reset: true, notes: "Every request: the first SSE chunk, then a TCP reset (SO_LINGER 0).",
		body: sse(fmt.Sprintf(chunk, `{"role":"assistant","content":"Hel"}`, "null", ""))},
	{name: "connection_refused", kind: "network", notes: "Nothing listens on the provider's baseURL port.", refused: true},
	{name: "dns_failure", kind: "network", notes: "The baseURL's host (drover-fake.invalid) does not resolve.", refused: true, dns: true},
}

func TestCapture(t *testing.T) {
	bin := os.Getenv(captureEnv)
	if bin == "" {
		t.Skipf("set %s to an opencode binary to re-capture testdata", captureEnv)
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			capture(t, bin, sc)
		})
	}
}

// providerConfig is the opencode.json that points opencode at base: a
// custom OpenAI-compatible provider "fake" with one priced model.
func providerConfig(base string, noKey, askBash bool) string {
	opts := map[string]any{"baseURL": base + "/v1"}
	if !noKey {
		opts["apiKey"] = "fake-key-not-secret"
	}
	cfg := map[string]any{
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": opts,
			"models": map[string]any{"fake-model": map[string]any{"name": "Fake model",
				"cost": map[string]any{"input": 3, "output": 15}}},
		}},
		"model":      "fake/fake-model",
		"autoupdate": false,
		"share":      "disabled",
	}
	if askBash {
		cfg["permission"] = map[string]any{"bash": "ask"}
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

func capture(t *testing.T, bin string, sc scenario) {
	var base string
	if !sc.refused {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := io.ReadAll(r.Body)
			for k, v := range sc.headers {
				w.Header().Set(k, v)
			}
			if sc.status == 0 {
				w.Header().Set("Content-Type", "text/event-stream")
				title := strings.Contains(string(req), "title generator")
				if sc.tool && !title && !strings.Contains(string(req), `"role":"tool"`) {
					fmt.Fprint(w, toolCall)
					return
				}
				if sc.reset && !title {
					resetAfter(w, strings.TrimSuffix(sc.body, "data: [DONE]\n\n"))
					return
				}
				fmt.Fprint(w, sc.body)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(sc.status)
			fmt.Fprint(w, sc.body)
		}))
		defer srv.Close()
		base = srv.URL
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base = "http://" + l.Addr().String()
		l.Close()
		if sc.dns {
			base = "http://drover-fake.invalid:8080"
		}
	}
	home, wd := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + wd,
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_CONFIG_CONTENT=" + providerConfig(base, sc.noKey, sc.askBash)}
	args := []string{"run", "--format", "json"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = wd, env
	cmd.Stdin = strings.NewReader("say hi\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		code = 124
	}
	version, _ := exec.Command(bin, "--version").Output()
	dir := filepath.Join("testdata", sc.name)
	clean := func(s string) string { // temp paths and the port vary per run
		s = strings.ReplaceAll(s, home, "$HOME")
		s = strings.ReplaceAll(s, wd, "$WORKDIR")
		return strings.ReplaceAll(s, base, "$BASE_URL")
	}
	writeFile(t, filepath.Join(dir, "stdout"), clean(stdout.String()))
	writeFile(t, filepath.Join(dir, "stderr"), clean(stderr.String()))
	writeFile(t, filepath.Join(dir, "exit_code"), strconv.Itoa(code)+"\n")
	writeFile(t, filepath.Join(dir, "cmd"), fmt.Sprintf("# opencode %s against TestCapture's fake OpenAI-compatible API (scenario %s); the API key is a dummy; prompt on stdin\n%s %s %s\n",
		strings.TrimSpace(string(version)), sc.name, clean(strings.Join(env[1:], " ")), filepath.Base(bin), strings.Join(args, " ")))
	exp, _ := json.MarshalIndent(map[string]any{"kind": sc.kind, "alt_kinds": sc.alt, "notes": sc.notes}, "", "  ")
	writeFile(t, filepath.Join(dir, "expected.json"), string(exp)+"\n")
	t.Logf("%s: exit %d", sc.name, code)
}

// resetAfter writes part of a stream and resets the connection.
func resetAfter(w http.ResponseWriter, part string) {
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, part)
	w.(http.Flusher).Flush()
	time.Sleep(200 * time.Millisecond)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
