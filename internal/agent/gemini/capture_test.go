package gemini_test

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

// captureEnv names the gemini binary TestCapture runs. Unset, it skips:
//
//	DROVER_CAPTURE_GEMINI=$(command -v gemini) go test ./internal/agent/gemini -run TestCapture -v
//
// Each scenario runs the real CLI against a fake Gemini API on 127.0.0.1
// and rewrites testdata/<scenario>/{stdout,stderr,exit_code,cmd,expected.json}.
// Gemini CLI retries 429 and 5xx up to 10 times (5s doubling to 30s), so
// the retrying scenarios take a few minutes; they run in parallel.
const captureEnv = "DROVER_CAPTURE_GEMINI"

// captureModel is passed with -m: without it the CLI asks a router model
// first (an extra generateContent call per prompt).
const captureModel = "gemini-2.5-flash"

type scenario struct {
	name, kind, notes string
	alt               []string
	// status and body answer every request; status 0 = the SSE in body.
	status int
	body   string
	// refused: nothing listens on the port. noKey: GEMINI_API_KEY unset.
	refused, noKey bool
	// tool: the first request is answered with toolCall, the one that
	// carries the tool's result with body.
	tool bool
	// dns: the base URL's host does not resolve (.invalid never does).
	dns bool
	// maxTurns, when set, is model.maxSessionTurns in settings.json.
	maxTurns int
}

// toolCall asks the CLI to run a shell command (it runs under --yolo).
var toolCall = sse(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"echo drover-tool-ok","description":"print a word"}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":20,"totalTokenCount":1020},"modelVersion":"gemini-2.5-flash"}`)

func apiError(code int, status, msg string, details ...string) string {
	d := ""
	if len(details) > 0 {
		d = `,"details":[` + strings.Join(details, ",") + `]`
	}
	b, _ := json.Marshal(msg)
	return fmt.Sprintf(`{"error":{"code":%d,"message":%s,"status":%q%s}}`, code, b, status, d)
}

const (
	retryInfo  = `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}`
	perMinute  = `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"10"}]}`
	perDay     = `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"250"}]}`
	keyInvalid = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}`
)

func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.String()
}

var scenarios = []scenario{
	{name: "success", kind: "succeeded", notes: "Two SSE chunks of text, finishReason STOP, usageMetadata 1200 in / 12 out.",
		body: sse(
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":" there, all done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":12,"totalTokenCount":1212},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`)},
	{name: "tool_call", kind: "succeeded", tool: true, notes: "The model runs `echo drover-tool-ok` (run_shell_command), then answers with text.",
		body: sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"The command printed drover-tool-ok."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1100,"candidatesTokenCount":9,"totalTokenCount":1109},"modelVersion":"gemini-2.5-flash"}`)},
	{name: "max_turns", kind: "max_turns", tool: true, maxTurns: 1, notes: "model.maxSessionTurns 1 in settings.json; the model calls a tool, so a second turn would be needed.",
		body: sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"unreachable"}]},"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-flash"}`)},
	{name: "safety_refusal", kind: "refused", alt: []string{"unknown"}, notes: "The model's only candidate ends with finishReason SAFETY and no text.",
		body: sse(`{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"SAFETY","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1200},"modelVersion":"gemini-2.5-flash"}`)},
	{name: "rate_limit_429", kind: "rate_limited", notes: "Every request: 429 RESOURCE_EXHAUSTED with a per-minute QuotaFailure and RetryInfo 2s; the CLI retries, then gives up.",
		status: 429, body: apiError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", perMinute, retryInfo)},
	{name: "quota_daily_429", kind: "usage_limited", alt: []string{"quota_exhausted"}, notes: "429 RESOURCE_EXHAUSTED with a per-day QuotaFailure: the CLI treats it as terminal (no retries).",
		status: 429, body: apiError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", perDay)},
	{name: "auth_401", kind: "auth_failed", notes: "401 UNAUTHENTICATED.",
		status: 401, body: apiError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")},
	{name: "api_key_invalid_400", kind: "auth_failed", notes: "What the real API answers a wrong key: 400 INVALID_ARGUMENT, reason API_KEY_INVALID.",
		status: 400, body: apiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", keyInvalid)},
	{name: "permission_403", kind: "permission_denied", alt: []string{"auth_failed"}, notes: "403 PERMISSION_DENIED.",
		status: 403, body: apiError(403, "PERMISSION_DENIED", "The caller does not have permission")},
	{name: "billing_402", kind: "quota_exhausted", notes: "402 RESOURCE_EXHAUSTED, prepay credits depleted: the Gemini API's answer since it moved them off 429 (discuss.ai.google.dev, 'Depleted prepay credits now return HTTP 402 instead of 429').",
		status: 402, body: apiError(402, "RESOURCE_EXHAUSTED", "Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing. Learn more at https://ai.google.dev/gemini-api/docs/billing#prepay.")},
	{name: "server_500", kind: "provider_unavailable", notes: "Every request: 500 INTERNAL; the CLI retries 10 times then gives up.",
		status: 500, body: apiError(500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")},
	{name: "overloaded_503", kind: "provider_unavailable", notes: "Every request: 503 UNAVAILABLE 'The model is overloaded'; retried 10 times.",
		status: 503, body: apiError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")},
	{name: "context_too_long", kind: "context_exhausted", notes: "400 INVALID_ARGUMENT: the input token count exceeds the maximum.",
		status: 400, body: apiError(400, "INVALID_ARGUMENT", "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).")},
	{name: "connection_refused", kind: "network", notes: "Nothing listens on the base URL's port.", refused: true},
	{name: "dns_failure", kind: "network", notes: "The base URL's host (drover-fake.invalid) does not resolve.", refused: true, dns: true},
	{name: "missing_api_key", kind: "config_error", alt: []string{"auth_failed"}, noKey: true,
		notes: "GEMINI_API_KEY unset and no settings auth type: the CLI exits before any request."},
}

func TestCapture(t *testing.T) {
	bin := os.Getenv(captureEnv)
	if bin == "" {
		t.Skipf("set %s to a gemini binary to re-capture testdata", captureEnv)
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			capture(t, bin, sc)
		})
	}
}

func capture(t *testing.T, bin string, sc scenario) {
	base := "http://127.0.0.1:1"
	if !sc.refused {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := io.ReadAll(r.Body)
			if sc.status == 0 {
				w.Header().Set("Content-Type", "text/event-stream")
				if sc.tool && !strings.Contains(string(req), "functionResponse") {
					fmt.Fprint(w, toolCall)
					return
				}
				fmt.Fprint(w, sc.body)
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
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
	if !sc.noKey {
		// GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type,
		// which headless mode refuses ("Invalid auth method selected.");
		// naming the API-key type in settings keeps the base URL.
		settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}}`
		if sc.maxTurns > 0 {
			settings += fmt.Sprintf(`,"model":{"maxSessionTurns":%d}`, sc.maxTurns)
		}
		writeFile(t, filepath.Join(home, ".gemini", "settings.json"), settings+"}")
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + wd}
	if !sc.noKey {
		env = append(env, "GEMINI_API_KEY=fake-key-not-secret", "GOOGLE_GEMINI_BASE_URL="+base)
	}
	args := []string{"-p", "say hi", "--output-format", "stream-json", "--yolo", "--skip-trust", "-m", captureModel}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = wd, env
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
	writeFile(t, filepath.Join(dir, "cmd"), fmt.Sprintf("# Gemini CLI %s against TestCapture's fake Gemini API (scenario %s); GEMINI_API_KEY is a dummy\n%s %s %s\n",
		strings.TrimSpace(string(version)), sc.name, clean(strings.Join(env[1:], " ")), filepath.Base(bin), strings.Join(args, " ")))
	exp, _ := json.MarshalIndent(map[string]any{"kind": sc.kind, "alt_kinds": sc.alt, "notes": sc.notes}, "", "  ")
	writeFile(t, filepath.Join(dir, "expected.json"), string(exp)+"\n")
	t.Logf("%s: exit %d", sc.name, code)
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
