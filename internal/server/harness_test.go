package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/status/statustest"
	"github.com/drover-dev/drover/internal/store"
)

// harness is a server over a seeded SQLite store.
type harness struct {
	t        *testing.T
	srv      *httptest.Server
	w        statustest.World
	router   routers.Router
	refresh  atomic.Int32
	token    string
	validate bool
}

type harnessOpt func(*server.Options)

func newHarness(t *testing.T, opts ...harnessOpt) *harness {
	t.Helper()
	st, cfg := statustest.Open(t)
	h := &harness{t: t, validate: true}
	h.w = statustest.Seed(t, st, cfg, time.Now().UTC())
	o := server.Options{Store: st, Config: func() *config.Config { return cfg },
		Refresh: func() { h.refresh.Add(1); time.Sleep(50 * time.Millisecond) },
		Explain: func(ctx context.Context, ref string) (any, error) {
			return map[string]string{"card": ref, "why": "waiting for its retry"}, nil
		},
		Heartbeat: 200 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	h.token = o.AuthToken
	h.srv = httptest.NewServer(server.New(o).Handler())
	t.Cleanup(h.srv.Close)
	raw, err := server.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("openapi: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi document invalid: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: h.srv.URL}}
	if h.router, err = gorillamux.NewRouter(doc); err != nil {
		t.Fatal(err)
	}
	return h
}

// resp is a response with its body read.
type resp struct {
	*http.Response
	Body []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("%d %s: not JSON: %v", r.StatusCode, r.Body, err)
	}
	return m
}

func (r resp) errCode(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	if e == nil || e["message"] == "" {
		t.Fatalf("no error envelope: %s", r.Body)
	}
	return e["code"].(string)
}

// do sends a request (body: nil, a string sent as is, or a value sent as
// JSON) and validates the response against the OpenAPI document.
func (h *harness) do(method, path string, body any, hdr ...string) resp {
	h.t.Helper()
	var rd io.Reader
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	r := resp{res, out}
	if h.validate && strings.HasPrefix(path, "/api/") {
		h.check(req, raw, r)
	}
	return r
}

// check validates r against the OpenAPI operation of req.
func (h *harness) check(req *http.Request, body []byte, r resp) {
	h.t.Helper()
	vreq := req.Clone(context.Background())
	if body != nil {
		vreq.Body = io.NopCloser(bytes.NewReader(body))
	}
	route, params, err := h.router.FindRoute(vreq)
	if err != nil {
		// Undocumented routes and methods must still answer the envelope.
		var m struct {
			Error *struct{ Code, Message string } `json:"error"`
		}
		if r.StatusCode < 400 || json.Unmarshal(r.Body, &m) != nil || m.Error == nil || m.Error.Code == "" || m.Error.Message == "" {
			h.t.Errorf("%s %s → %d: no OpenAPI route (%v) and no error envelope: %s", req.Method, req.URL.Path, r.StatusCode, err, r.Body)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.StatusCode, Header: r.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(r.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		h.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %.400s", req.Method, req.URL.Path, r.StatusCode, err, r.Body)
	}
}

func (h *harness) want(r resp, status int) resp {
	h.t.Helper()
	if r.StatusCode != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, status, r.Body)
	}
	return r
}

func cardStore(t *testing.T) (store.Store, *config.Config) { return statustest.Open(t) }
