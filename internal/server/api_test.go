package server_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/server"
)

func TestStateAndIssue(t *testing.T) {
	h := newHarness(t)
	m := h.want(h.do("GET", "/api/v1/state", nil), 200).json(t)
	checkSymphony(t, m)
	if n := m["counts"].(map[string]any)["running"].(float64); n != 1 {
		t.Fatalf("counts.running = %v", n)
	}
	is := h.want(h.do("GET", "/api/v1/"+h.w.Running.Identifier, nil), 200).json(t)
	if is["status"] != "running" || is["issue_identifier"] != h.w.Running.Identifier {
		t.Fatalf("issue = %v", is)
	}
	if c := h.want(h.do("GET", "/api/v1/DRV-999", nil), 404).errCode(t); c != "issue_not_found" {
		t.Fatalf("code %s", c)
	}
	if c := h.want(h.do("POST", "/api/v1/state", nil), 405).errCode(t); c != "method_not_allowed" {
		t.Fatal(c)
	}
}

func checkSymphony(t *testing.T, m map[string]any) {
	t.Helper()
	for _, k := range []string{"generated_at", "counts", "running", "retrying", "codex_totals", "rate_limits", "blocked", "parked", "agents", "spend", "errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("state lacks %q", k)
		}
	}
	run := m["running"].([]any)[0].(map[string]any)
	for _, k := range []string{"issue_id", "issue_identifier", "state", "session_id", "turn_count", "last_event", "last_message", "started_at", "last_event_at", "tokens"} {
		if _, ok := run[k]; !ok {
			t.Errorf("running[] lacks %q", k)
		}
	}
	for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
		if _, ok := run["tokens"].(map[string]any)[k]; !ok {
			t.Errorf("tokens lacks %q", k)
		}
	}
	rt := m["retrying"].([]any)[0].(map[string]any)
	for _, k := range []string{"issue_id", "issue_identifier", "attempt", "due_at", "error"} {
		if _, ok := rt[k]; !ok {
			t.Errorf("retrying[] lacks %q", k)
		}
	}
	for _, k := range []string{"input_tokens", "output_tokens", "total_tokens", "seconds_running"} {
		if _, ok := m["codex_totals"].(map[string]any)[k]; !ok {
			t.Errorf("codex_totals lacks %q", k)
		}
	}
}

func TestRefreshCoalesces(t *testing.T) {
	h := newHarness(t)
	a := h.want(h.do("POST", "/api/v1/refresh", nil), 202).json(t)
	b := h.want(h.do("POST", "/api/v1/refresh", "{}"), 202).json(t)
	if a["queued"] != true || a["coalesced"] != false || b["coalesced"] != true {
		t.Fatalf("refresh: %v then %v", a, b)
	}
	time.Sleep(120 * time.Millisecond)
	if n := h.refresh.Load(); n != 1 {
		t.Fatalf("Refresh called %d times, want 1", n)
	}
	h.want(h.do("POST", "/api/v1/refresh", `{"x":1}`), 400)

	h2 := newHarness(t, func(o *server.Options) { o.Refresh = nil })
	if c := h2.want(h2.do("POST", "/api/v1/refresh", nil), 503).errCode(t); c != "dispatcher_unavailable" {
		t.Fatal(c)
	}
}

func TestCards(t *testing.T) {
	h := newHarness(t)
	l := h.want(h.do("GET", "/api/v1/cards?state=ready&limit=1", nil), 200).json(t)
	if len(l["cards"].([]any)) != 1 || l["next_offset"] != 1.0 {
		t.Fatalf("page 1: %v", l)
	}
	l = h.want(h.do("GET", "/api/v1/cards?state=ready&limit=1&offset=1", nil), 200).json(t)
	if len(l["cards"].([]any)) != 1 || l["next_offset"] != nil {
		t.Fatalf("page 2: %v", l)
	}
	l = h.want(h.do("GET", "/api/v1/cards?label=db", nil), 200).json(t)
	if len(l["cards"].([]any)) != 1 {
		t.Fatalf("label filter: %v", l)
	}
	l = h.want(h.do("GET", "/api/v1/cards?q=logo&agent=sim", nil), 200).json(t)
	if len(l["cards"].([]any)) != 1 {
		t.Fatalf("q filter: %v", l)
	}
	if c := h.want(h.do("GET", "/api/v1/cards?state=nope", nil), 400).errCode(t); c != "invalid_parameter" {
		t.Fatal(c)
	}
	h.want(h.do("GET", "/api/v1/cards?limit=0", nil), 400)

	c := h.want(h.do("POST", "/api/v1/cards", map[string]any{"title": "New card", "labels": []string{"x"}, "priority": 2, "spec": map[string]any{"sim": []string{"succeeded"}}}), 201).json(t)
	id := c["identifier"].(string)
	if c["state"] != "ready" {
		t.Fatalf("created: %v", c)
	}
	if c := h.want(h.do("POST", "/api/v1/cards", map[string]any{"body": "no title"}), 400).json(t); c["error"].(map[string]any)["field"] != "title" {
		t.Fatalf("missing title: %v", c)
	}
	r := h.want(h.do("POST", "/api/v1/cards", `{"title":"x","colour":"red"}`), 400)
	if r.errCode(t) != "unknown_field" || !strings.Contains(string(r.Body), "colour") {
		t.Fatalf("unknown field: %s", r.Body)
	}
	h.want(h.do("POST", "/api/v1/cards", `{"title": 5}`), 400)
	h.want(h.do("POST", "/api/v1/cards", `{"title":"a"} {"title":"b"}`), 400)
	h.want(h.do("POST", "/api/v1/cards", ``), 400)
	h.want(h.do("POST", "/api/v1/cards", map[string]any{"title": "x", "agent": "nobody"}), 400)

	d := h.want(h.do("GET", "/api/v1/cards/"+id, nil), 200).json(t)
	if d["title"] != "New card" || d["runs"] == nil || len(d["events"].([]any)) != 1 {
		t.Fatalf("get: %v", d)
	}
	h.want(h.do("GET", "/api/v1/cards/"+h.w.Running.Identifier, nil), 200)
	if c := h.want(h.do("GET", "/api/v1/cards/DRV-999", nil), 404).errCode(t); c != "card_not_found" {
		t.Fatal(c)
	}
	p := h.want(h.do("PATCH", "/api/v1/cards/"+id, map[string]any{"title": "Renamed", "priority": 1}), 200).json(t)
	if p["title"] != "Renamed" || p["priority"] != 1.0 {
		t.Fatalf("patch: %v", p)
	}
	h.want(h.do("PATCH", "/api/v1/cards/"+id, map[string]any{"state": "done"}), 400)
	// A running card's spec is not changed under its run (issue 13, item 8).
	if c := h.want(h.do("PATCH", "/api/v1/cards/"+h.w.Running.Identifier, map[string]any{"spec": map[string]any{"plan": "b"}}), 400).errCode(t); c != "invalid_input" {
		t.Fatal(c)
	}
	h.want(h.do("DELETE", "/api/v1/cards/"+id, nil), 405)
}

func TestCardActions(t *testing.T) {
	h := newHarness(t)
	b := h.w.Blocked.Identifier
	// A sink is left only by resume.
	if c := h.want(h.do("POST", "/api/v1/cards/"+b+"/move", map[string]any{"state": "ready"}), 409).errCode(t); c != "invalid_transition" {
		t.Fatal(c)
	}
	r := h.want(h.do("POST", "/api/v1/cards/"+b+"/resume", nil), 200).json(t)
	if r["state"] != "ready" || r["block_reason"] != nil || r["retry_epoch"].(float64) != float64(h.w.Blocked.RetryEpoch+1) {
		t.Fatalf("resume: %v", r)
	}
	h.want(h.do("POST", "/api/v1/cards/"+b+"/resume", nil), 409)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/move", map[string]any{"state": "backlog", "reason": "later"}), 200)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/move", map[string]any{"reason": "no state"}), 400)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/move", map[string]any{"state": "nowhere"}), 400)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/block", map[string]any{}), 400)
	bl := h.want(h.do("POST", "/api/v1/cards/"+b+"/block", map[string]any{"reason": "needs a design"}), 200).json(t)
	if bl["block_reason"].(map[string]any)["what"] != "needs a design" {
		t.Fatalf("block: %v", bl)
	}
	if c := h.want(h.do("POST", "/api/v1/cards/"+b+"/block", map[string]any{"text": "wrong field"}), 400).errCode(t); c != "unknown_field" {
		t.Fatal(c)
	}
	cm := h.want(h.do("POST", "/api/v1/cards/"+b+"/comment", map[string]any{"text": "looking"}), 201).json(t)
	if cm["body"] != "looking" {
		t.Fatalf("comment: %v", cm)
	}
	h.want(h.do("POST", "/api/v1/cards/"+b+"/comment", map[string]any{"text": ""}), 400)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/cancel", nil), 200)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/cancel", nil), 409)
	h.want(h.do("POST", "/api/v1/cards/"+b+"/reopen", nil), 200)
	// Answer: only parked cards.
	h.want(h.do("POST", "/api/v1/cards/"+b+"/answer", map[string]any{"text": "blue"}), 409)
	a := h.want(h.do("POST", "/api/v1/cards/"+h.w.Parked.Identifier+"/answer", map[string]any{"text": "blue"}), 200).json(t)
	if a["state"] != "ready" {
		t.Fatalf("answer: %v", a)
	}
	h.want(h.do("POST", "/api/v1/cards/DRV-999/resume", nil), 404)
	ex := h.want(h.do("GET", "/api/v1/cards/"+b+"/explain", nil), 200).json(t)
	if ex["why"] == nil {
		t.Fatalf("explain: %v", ex)
	}
	h2 := newHarness(t, func(o *server.Options) { o.Explain = nil })
	h2.want(h2.do("GET", "/api/v1/cards/"+b+"/explain", nil), 501)
}

func TestRunsAndLogs(t *testing.T) {
	h := newHarness(t)
	l := h.want(h.do("GET", "/api/v1/runs", nil), 200).json(t)
	if len(l["runs"].([]any)) != 2 {
		t.Fatalf("runs: %v", l)
	}
	l = h.want(h.do("GET", "/api/v1/runs?open=true&card="+h.w.Running.Identifier, nil), 200).json(t)
	if len(l["runs"].([]any)) != 1 {
		t.Fatalf("open runs: %v", l)
	}
	h.want(h.do("GET", "/api/v1/runs?open=maybe", nil), 400)
	h.want(h.do("GET", "/api/v1/runs?card=DRV-999", nil), 404)
	run := h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID, nil), 200).json(t)
	if run["attempt"] != 2.0 {
		t.Fatalf("run: %v", run)
	}
	h.want(h.do("GET", "/api/v1/runs/nope", nil), 404)

	full := h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log", nil), 200)
	if !strings.HasPrefix(string(full.Body), "starting\n") {
		t.Fatalf("log: %q", full.Body)
	}
	part := h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log", nil, "Range", "bytes=0-7"), 206)
	if string(part.Body) != "starting" || part.Header.Get("Content-Range") == "" {
		t.Fatalf("range: %q %v", part.Body, part.Header)
	}
	tail := h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log?offset=-16", nil), 200)
	if string(tail.Body) != "FAIL flaky 1.1s\n" || tail.Header.Get("X-Next-Offset") != tail.Header.Get("X-Log-Size") {
		t.Fatalf("tail: %q %v", tail.Body, tail.Header)
	}
	mid := h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log?offset=9&limit=7", nil), 200)
	if string(mid.Body) != "running" || mid.Header.Get("X-Next-Offset") != "16" {
		t.Fatalf("offset/limit: %q %v", mid.Body, mid.Header)
	}
	h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log?limit=0", nil), 400)
	h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID+"/log", nil, "Range", "bytes=9999-"), 416)
	// The retrying card's finished run has no log.
	rs := h.want(h.do("GET", "/api/v1/runs?card="+h.w.Retrying.Identifier, nil), 200).json(t)["runs"].([]any)
	if c := h.want(h.do("GET", "/api/v1/runs/"+rs[0].(map[string]any)["id"].(string)+"/log", nil), 404).errCode(t); c != "log_not_found" {
		t.Fatal(c)
	}
}

func TestEventsAndAgents(t *testing.T) {
	h := newHarness(t)
	l := h.want(h.do("GET", "/api/v1/events?limit=2", nil), 200).json(t)
	evs := l["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("events: %v", l)
	}
	next := int(l["next_since"].(float64))
	l = h.want(h.do("GET", "/api/v1/events?since="+itoa(next), nil), 200).json(t)
	if first := l["events"].([]any)[0].(map[string]any)["seq"].(float64); int(first) <= next {
		t.Fatalf("since not honoured: %v", first)
	}
	l = h.want(h.do("GET", "/api/v1/events?card="+h.w.Parked.Identifier, nil), 200).json(t)
	if len(l["events"].([]any)) != 2 {
		t.Fatalf("card events: %v", l)
	}
	h.want(h.do("GET", "/api/v1/events?since=-4", nil), 400)

	a := h.want(h.do("GET", "/api/v1/agents", nil), 200).json(t)
	if len(a["agents"].([]any)) != 2 {
		t.Fatalf("agents: %v", a)
	}
	r := h.want(h.do("POST", "/api/v1/agents/script/resume", nil), 200).json(t)
	if r["state"] != "closed" {
		t.Fatalf("resume agent: %v", r)
	}
	h.want(h.do("POST", "/api/v1/agents/nobody/resume", nil), 400)
}

func TestOpsEndpoints(t *testing.T) {
	h := newHarness(t)
	h.want(h.do("GET", "/healthz", nil), 200)
	if m := h.want(h.do("GET", "/readyz", nil), 200).json(t); m["store"] != "sqlite" {
		t.Fatal(m)
	}
	h.want(h.do("GET", "/metrics", nil), 200)
	doc := h.want(h.do("GET", "/api/v1/openapi.json", nil), 200).json(t)
	if doc["openapi"] != "3.0.3" {
		t.Fatal(doc["openapi"])
	}
	if c := h.want(h.do("GET", "/api/v1/nope/deeper", nil), 404).errCode(t); c != "route_not_found" {
		t.Fatal(c)
	}
	// readyz fails when the store is gone.
	h.w.Store.Close()
	h.want(h.do("GET", "/readyz", nil), 503)
}

func itoa(n int) string { return strconv.Itoa(n) }
