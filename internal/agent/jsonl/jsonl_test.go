package jsonl

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	var ev struct{ Type string }
	for _, c := range []struct {
		line   string
		ok     bool
		why    string
		evType string
	}{
		{"", false, "", ""},
		{"   \r\n", false, "", ""},
		{`{"type":"result"}`, true, "", "result"},
		{"  {\"type\":\"x\"}\n", true, "", "x"},
		{"Error: not json", false, "not a JSON event", ""},
		{`{"type":`, false, "unexpected end of JSON input", ""},
	} {
		ev.Type = ""
		ok, why := Decode([]byte(c.line), &ev)
		if ok != c.ok || why != c.why || ev.Type != c.evType {
			t.Errorf("Decode(%q) = %v, %q, type %q; want %v, %q, %q", c.line, ok, why, ev.Type, c.ok, c.why, c.evType)
		}
	}
}

func TestProblemsKeepTheFirstAndCountTheRest(t *testing.T) {
	var p Problems
	if p.List() != nil {
		t.Fatal("no problems should list nothing")
	}
	for range MaxProblems + 3 {
		p.Add("not a JSON event", []byte(strings.Repeat("é", 200)))
	}
	l := p.List()
	if len(l) != MaxProblems+1 || l[MaxProblems] != "… 3 more bad lines" || !strings.Contains(l[0], "…") {
		t.Fatalf("problems = %d entries, last %q, first %q", len(l), l[len(l)-1], l[0])
	}
}
