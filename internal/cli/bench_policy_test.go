package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestBenchPolicyJSON: drover bench policy --json is an array of the
// issue's objects, with drover's row in every scenario and the cost its
// runs at the stated price.
func TestBenchPolicyJSON(t *testing.T) {
	code, out, errw := runCLI(t, "bench", "policy", "--json", "--price", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	want := "cost_usd finished_without_human human_actions policy runs scenario time_to_truth_s"
	scenarios := map[string]bool{}
	for _, r := range rows {
		var keys []string
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if got := strings.Join(keys, " "); got != want {
			t.Fatalf("keys %q, want %q", got, want)
		}
		if r["policy"] == "drover" {
			scenarios[r["scenario"].(string)] = true
			if r["cost_usd"].(float64) != 2*r["runs"].(float64) {
				t.Errorf("%v: cost %v for %v runs at $2", r["scenario"], r["cost_usd"], r["runs"])
			}
		}
	}
	if len(scenarios) < 7 {
		t.Errorf("drover rows in %d scenarios, want every one of 7: %v", len(scenarios), scenarios)
	}
}

// TestBenchPolicyTable: the default output is the table, the models'
// citations and the relations, and the other scenarios still parse.
func TestBenchPolicyTable(t *testing.T) {
	code, out, errw := runCLI(t, "bench", "policy")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw)
	}
	for _, s := range []string{"scenario", "provider_outage", "symphony-v1", "iterion-adr015", "ADR-015", "relations", "$0.50 per agent session"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if code, _, errw := runCLI(t, "bench", "policy", "--price", "0"); code != 2 || !strings.Contains(errw, "--price") {
		t.Errorf("--price 0: exit %d, %s", code, errw)
	}
	if code, _, errw := runCLI(t, "bench", "nope"); code != 2 || !strings.Contains(errw, "unknown bench scenario") {
		t.Errorf("bench nope: exit %d, %s", code, errw)
	}
}

// TestBenchPolicyDocs: docs/benchmarks.md shows the table this checkout
// prints (the benchmark is deterministic, so any change shows here).
func TestBenchPolicyDocs(t *testing.T) {
	_, out, _ := runCLI(t, "bench", "policy")
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _, _ := strings.Cut(out, "\nscenarios:")
	_, rel, _ := strings.Cut(out, "\nrelations (")
	for _, part := range []string{rows, "relations (" + strings.TrimRight(rel, "\n")} {
		if !strings.Contains(string(doc), part) {
			t.Errorf("docs/benchmarks.md does not show what drover bench policy prints; paste it into \"What a policy wastes\":\n%s", part)
		}
	}
}
