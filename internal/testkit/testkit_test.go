package testkit_test

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestReceiverFailsThenDelivers(t *testing.T) {
	r := testkit.NewReceiver(t)
	r.FailNext(2, http.StatusServiceUnavailable)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(r.URL+"/hook", "application/json", strings.NewReader(`{"a":1}`))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
		}()
	}
	wg.Wait()
	got := r.WaitFor(t, "/hook", 3, time.Second)
	if len(got) != 3 || len(r.Requests("/hook")) != 5 || len(r.Requests("/other")) != 0 {
		t.Fatalf("delivered %d of %d requests, want 3 of 5", len(got), len(r.Requests("")))
	}
	if q := r.Requests("")[0]; q.Status != http.StatusServiceUnavailable || string(q.Body) != `{"a":1}` || q.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("first request = %+v", q)
	}
	r.SetStatus(http.StatusInternalServerError)
	res, err := http.Get(r.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError || len(r.Delivered("")) != 3 {
		t.Fatalf("after SetStatus(500): answered %d, %d delivered", res.StatusCode, len(r.Delivered("")))
	}
}

func TestClock(t *testing.T) {
	start := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	c := testkit.NewClock(start)
	var now func() time.Time = c.Now
	c.Advance(90 * time.Second)
	if got := now(); !got.Equal(start.Add(90 * time.Second)) {
		t.Fatalf("after Advance: %v", got)
	}
	c.Set(start)
	if got := now(); !got.Equal(start) {
		t.Fatalf("after Set: %v", got)
	}
}

func TestWorkflowDefaultsAndOverrides(t *testing.T) {
	dir := t.TempDir()
	w := testkit.NewWorkflow().
		Set("dispatch", "{node: n9, lease: 7s}").
		Set("policy", "max_attempts: 4\nbackoff: {base: 50ms, max: 100ms, jitter: 0}").
		Set("server", "port: 0").
		Prompt("Do {{ card.title }}")
	cfg := w.Config(t, dir)
	if cfg.Dispatch.Node != "n9" || cfg.Dispatch.Lease != 7*time.Second || cfg.Policy.MaxAttempts != 4 || cfg.Agents.Default != "sim" {
		t.Fatalf("config = %+v %+v %+v", cfg.Dispatch, cfg.Policy, cfg.Agents)
	}
	w.Set("dispatch", "{node: n2}")
	if s := w.String(); strings.Count(s, "dispatch:") != 1 || !strings.Contains(s, "node: n2") || !strings.HasSuffix(s, "---\nDo {{ card.title }}\n") {
		t.Fatalf("rendered:\n%s", s)
	}
	if path := w.Write(t, dir); path != dir+"/WORKFLOW.md" {
		t.Fatalf("written to %s", path)
	}
}

func TestStoreOnEachBackend(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		st := testkit.Store(t, b)
		if err := st.Ping(context.Background()); err != nil {
			t.Fatalf("%s store does not answer: %v", b, err)
		}
	})
}

func TestBinaryRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/drover")
	}
	out, err := exec.Command(testkit.Binary(t), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "serve") {
		t.Fatalf("drover --help: %v\n%s", err, out)
	}
}

// TestProductionDoesNotImportTestkit keeps the kit out of the binary.
func TestProductionDoesNotImportTestkit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/drover-dev/drover/cmd/drover").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasSuffix(pkg, "/internal/testkit") || strings.Contains(pkg, "/storetest") || strings.HasSuffix(pkg, "/statustest") {
			t.Errorf("cmd/drover depends on the test-only package %s", pkg)
		}
	}
}

// TestOnlyTheAgentPackagesNameKinds keeps agent kinds behind the registry:
// no production package outside internal/agent imports a kind package, so
// adding a kind is one package and one registry line (docs/design.md,
// Package layout).
func TestOnlyTheAgentPackagesNameKinds(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/drover-dev/drover/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const agentPkg = "github.com/drover-dev/drover/internal/agent"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], agentPkg+"/") {
			continue
		}
		for _, imp := range fields[1:] {
			kind, ok := strings.CutPrefix(imp, agentPkg+"/")
			// proc (the process supervisor) and sandbox (bwrap's argv) are
			// how every kind runs, not kinds.
			if ok && kind != "registry" && kind != "proc" && kind != "sandbox" {
				t.Errorf("%s imports the agent kind package %s; ask internal/agent/registry instead", fields[0], imp)
			}
		}
	}
}
