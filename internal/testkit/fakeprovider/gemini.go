package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Gemini API (generativelanguage.googleapis.com, v1beta), as Gemini CLI
// calls it when GOOGLE_GEMINI_BASE_URL points here:
//
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse — the chat
//     turn: SSE, each event "data: <GenerateContentResponse>";
//   - POST /v1beta/models/{model}:generateContent — one JSON response (the
//     CLI's side calls: model routing without -m, next-speaker and loop
//     checks, session summaries);
//   - POST /v1beta/models/{model}:countTokens — {"totalTokens": n};
//   - GET /v1beta/models — the model list.
//
// Shapes: https://ai.google.dev/api/generate-content (candidates[].content
// .parts[] with text or functionCall, finishReason, usageMetadata) and
// https://ai.google.dev/gemini-api/docs/troubleshooting (errors are
// google.rpc.Status: {"error":{"code","message","status","details"}}).
func (s *Server) routeGemini(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1beta/models/{call}", s.geminiCall)
	mux.HandleFunc("GET /v1beta/models", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", "", "models")
		writeJSON(w, http.StatusOK, nil, `{"models":[{"name":"models/gemini-2.5-flash","displayName":"Gemini 2.5 Flash (fake)","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens"]}]}`)
	})
}

// Detail messages (google.rpc error details) the errors carry.
const (
	geminiRetryInfo   = `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":%q}`
	geminiPerMinute   = `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_paid_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"10"}]}`
	geminiPerDay      = `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"250"}]}`
	geminiHelp        = `{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}`
	geminiQuotaText   = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
	geminiServiceDown = "The service is currently unavailable."
)

// geminiErrors are the HTTP errors of each step: code, status, message,
// details. credit_balance is what the API answers since prepay credits
// exist (announced on discuss.ai.google.dev, "Depleted prepay credits now
// return HTTP 402 instead of 429", with this body); usage_limit is the
// free tier's per-day quota, the API's nearest thing to a plan window
// (the CLI calls it terminal and does not retry it).
var geminiErrors = map[string]struct {
	code          int
	status, text  string
	details       []string
	retryDelaySec bool // add RetryInfo with the step's RetryAfter
}{
	"rate_limit":      {429, "RESOURCE_EXHAUSTED", geminiQuotaText, []string{geminiPerMinute, geminiHelp}, true},
	"usage_limit":     {429, "RESOURCE_EXHAUSTED", geminiQuotaText, []string{geminiPerDay, geminiHelp}, false},
	"unauthorized":    {401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", nil, false},
	"forbidden":       {403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", nil, false},
	"credit_balance":  {402, "RESOURCE_EXHAUSTED", "Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing. Learn more at https://ai.google.dev/gemini-api/docs/billing#prepay.", nil, false},
	"prompt_too_long": {400, "INVALID_ARGUMENT", "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).", nil, false},
	"server_error":    {500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", nil, false},
	"unavailable":     {503, "UNAVAILABLE", "The model is overloaded. Please try again later.", nil, false},
	"overloaded":      {503, "UNAVAILABLE", geminiServiceDown, nil, false},
}

// geminiError is the google.rpc.Status body of an error step.
func geminiError(st Step) (int, string, bool) {
	e, ok := geminiErrors[st.Kind]
	if !ok {
		return 0, "", false
	}
	details := append([]string(nil), e.details...)
	if e.retryDelaySec {
		details = append(details, fmt.Sprintf(geminiRetryInfo, strconv.Itoa(int(st.RetryAfter.Seconds()))+"s"))
	}
	d := ""
	if len(details) > 0 {
		d = `,"details":[` + strings.Join(details, ",") + `]`
	}
	return e.code, fmt.Sprintf(`{"error":{"code":%d,"message":%s,"status":%q%s}}`, e.code, quote(e.text), e.status, d), true
}

func (s *Server) geminiCall(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	switch method {
	case "countTokens":
		s.record(r, body, "", "count_tokens")
		writeJSON(w, http.StatusOK, nil, `{"totalTokens":`+strconv.Itoa(len(body)/4+1)+`}`)
		return
	case "streamGenerateContent", "generateContent":
	default:
		s.record(r, body, "", "not_found")
		writeJSON(w, http.StatusNotFound, nil, `{"error":{"code":404,"message":"Method not found.","status":"NOT_FOUND"}}`)
		return
	}
	st, idx := s.take(r, body)
	w.Header().Set("x-goog-request-id", "req_fake_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if code, msg, ok := geminiError(st); ok {
		h := http.Header{}
		if st.Kind == "rate_limit" {
			h.Set("retry-after", strconv.Itoa(int(st.RetryAfter.Seconds())))
		}
		writeJSON(w, code, h, msg)
		return
	}
	if st.Kind == "hang" {
		s.hang(r, idx)
		return
	}
	in := len(body)/4 + 1
	if method == "generateContent" {
		switch st.Kind {
		case "reset_midstream", "stall":
			s.halfBody(w, r, idx, st.Kind, "application/json; charset=UTF-8", geminiResponse(st, model, in))
			return
		}
		writeJSON(w, http.StatusOK, nil, geminiResponse(st, model, in))
		return
	}
	sse := newSSE(w)
	switch st.Kind {
	case "reset_midstream":
		sse.data(geminiChunk(model, `[{"text":"Let me"}]`, "", ""))
		s.drop(w, idx)
		return
	case "stall":
		sse.data(geminiChunk(model, `[{"text":`+quote(st.Text)+`}]`, "", ""))
		s.hang(r, idx)
		return
	}
	sse.data(geminiResponse(st, model, in))
}

// geminiResponse is the GenerateContentResponse of a step that answers:
// its text and function call as parts, its finishReason, usageMetadata.
// A stream sends it as its one chunk; generateContent as the body.
func geminiResponse(st Step, model string, in int) string {
	var parts []string
	if st.Text != "" && st.Kind != "refusal" {
		parts = append(parts, `{"text":`+quote(st.answerText())+`}`)
	}
	if st.Tool != nil && st.Kind != "question" {
		args := st.Tool.Input
		if !json.Valid([]byte(args)) {
			args = "{}"
		}
		parts = append(parts, `{"functionCall":{"name":`+quote(st.Tool.Name)+`,"args":`+args+`}}`)
	}
	finish := "STOP"
	extra := ""
	switch st.Kind {
	case "refusal":
		// A blocked candidate: no parts, finishReason SAFETY and the rating
		// that blocked it.
		finish = "SAFETY"
		extra = `,"safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]`
	case "max_tokens":
		finish = "MAX_TOKENS"
	}
	usage := fmt.Sprintf(`{"promptTokenCount":%d,"candidatesTokenCount":12,"totalTokenCount":%d}`, in, in+12)
	return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":%q,"index":0%s}],"usageMetadata":%s,"modelVersion":%s,"responseId":"resp_fake_%d"}`,
		strings.Join(parts, ","), finish, extra, usage, quote(or(model, "gemini-fake")), time.Now().UnixNano())
}

// geminiChunk is one streamed chunk with parts and no end yet.
func geminiChunk(model, parts, finish, usage string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":` + quote(finish)
	}
	u := ""
	if usage != "" {
		u = `,"usageMetadata":` + usage
	}
	return `{"candidates":[{"content":{"role":"model","parts":` + parts + `},"index":0` + f + `}]` + u + `,"modelVersion":` + quote(or(model, "gemini-fake")) + `}`
}

// data writes one data-only server-sent event (the Gemini API names none)
// and flushes it.
func (e *sse) data(d string) {
	fmt.Fprintf(e.w, "data: %s\r\n\r\n", d)
	if e.f != nil {
		e.f.Flush()
	}
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
