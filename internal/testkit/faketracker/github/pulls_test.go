package github

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func req(t *testing.T, s *Server, method, path, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	r, _ := http.NewRequest(method, s.URL+"/repos/acme/app"+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestPullsFake(t *testing.T) {
	s := New("acme", "app")
	defer s.Close()
	issue := s.AddIssue("an issue", "")
	resp, body := req(t, s, "POST", "/pulls", `{"title":"T","head":"acme:feat","base":"main"}`)
	if resp.StatusCode != 201 || resp.Header.Get("Location") == "" {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var p struct {
		Number int
		Head   struct{ Ref, SHA string }
	}
	_ = json.Unmarshal([]byte(body), &p)
	if p.Number != issue+1 || p.Head.Ref != "feat" || len(p.Head.SHA) != 40 {
		t.Fatalf("pull %+v: numbers are shared with issues, head is the branch", p)
	}
	if resp, body := req(t, s, "POST", "/pulls", `{"title":"T2","head":"feat","base":"dev"}`); resp.StatusCode != 422 || !strings.Contains(body, "A pull request already exists for acme:feat.") {
		t.Fatalf("duplicate head: %d %s", resp.StatusCode, body)
	}
	if resp, body := req(t, s, "POST", "/pulls", `{"head":"x","base":"main"}`); resp.StatusCode != 422 || !strings.Contains(body, `"field":"title"`) {
		t.Fatalf("no title: %d %s", resp.StatusCode, body)
	}
	for q, want := range map[string]int{
		"?head=acme:feat": 1, "?head=other:feat": 0, "?head=acme:fea": 0, "?base=main": 1, "?base=dev": 0,
		"?state=closed": 0, "?state=all&head=acme:feat&base=main": 1,
	} {
		_, body := req(t, s, "GET", "/pulls"+q, "")
		var got []any
		_ = json.Unmarshal([]byte(body), &got)
		if len(got) != want {
			t.Errorf("GET /pulls%s: %d, want %d", q, len(got), want)
		}
	}
	resp, _ = req(t, s, "GET", "/pulls/2", "")
	etag := resp.Header.Get("ETag")
	if resp.Header.Get("X-RateLimit-Limit") != "5000" || etag == "" {
		t.Fatalf("headers: %v", resp.Header)
	}
	if resp, _ := req(t, s, "GET", "/pulls/2", "", "If-None-Match", etag); resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	s.Push("feat", "1234567890123456789012345678901234567890")
	if resp, _ := req(t, s, "GET", "/pulls/2", "", "If-None-Match", etag); resp.StatusCode != 200 {
		t.Fatalf("after a push: %d", resp.StatusCode)
	}
	s.AddCheckRun("1234567890123456789012345678901234567890", "test", "completed", "failure", "t", "s", "")
	s.AddCheckRun("1234567890123456789012345678901234567890", "test", "completed", "success", "", "", "")
	for ref, want := range map[string]int{"1234567890123456789012345678901234567890": 1, "feat": 1, "main": 0} {
		_, body := req(t, s, "GET", "/commits/"+ref+"/check-runs", "")
		var got struct {
			TotalCount int                           `json:"total_count"`
			CheckRuns  []struct{ Conclusion string } `json:"check_runs"`
		}
		_ = json.Unmarshal([]byte(body), &got)
		if got.TotalCount != want || len(got.CheckRuns) != want || want == 1 && got.CheckRuns[0].Conclusion != "success" {
			t.Errorf("check runs of %s: %s", ref, body)
		}
	}
	_, body = req(t, s, "GET", "/commits/feat/check-runs?filter=all", "")
	if !strings.Contains(body, `"total_count":2`) {
		t.Errorf("filter=all: %s", body)
	}
	s.MergePull(2, "carol")
	_, body = req(t, s, "GET", "/issues/2", "")
	if !strings.Contains(body, `"closed_by":{`) || !strings.Contains(body, `"login":"carol"`) {
		t.Errorf("issues/get of a merged pull request: %s", body)
	}
	for route, want := range map[string]int{"POST /pulls": 3, "GET /pulls": 7, "GET /pulls/{number}": 3, "GET /commits/{ref}/check-runs": 4, "GET /issues/{number}": 1} {
		if got := s.Count(route); got != want {
			t.Errorf("Count(%q) = %d, want %d (%v)", route, got, want, s.Counts())
		}
	}
}
