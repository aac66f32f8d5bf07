// Package service checks docs/drover.service, the systemd unit
// docs/running-as-a-service.md describes.
package service

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const unitPath = "../../docs/drover.service"

// unitKeys reads the unit's [Service] section (the last value of a key wins,
// as in systemd).
func unitKeys(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, section := map[string]string{}, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			keys[k] = v
		}
	}
	return keys
}

// TestUnitStopsGracefully: systemd must give drover's own shutdown the time
// it takes, and leave the agents to drover until then.
func TestUnitStopsGracefully(t *testing.T) {
	keys := unitKeys(t)
	stop, err := time.ParseDuration(keys["TimeoutStopSec"])
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", keys["TimeoutStopSec"], err)
	}
	if need := dispatch.DefaultShutdownGrace + dispatch.ShutdownFinalWrite; stop <= need {
		t.Errorf("TimeoutStopSec=%v, but drover's shutdown may take %v (dispatch.DefaultShutdownGrace + ShutdownFinalWrite)", stop, need)
	}
	// control-group (the default) would SIGTERM the agents at the same
	// moment as drover, racing drover's own stop of them.
	if keys["KillMode"] != "mixed" {
		t.Errorf("KillMode=%q, want mixed: SIGTERM to drover only, SIGKILL to what is left after the timeout", keys["KillMode"])
	}
	if keys["ReadWritePaths"] == "" || !strings.HasPrefix(keys["WorkingDirectory"], keys["ReadWritePaths"]) {
		t.Errorf("ReadWritePaths=%q does not cover the board in WorkingDirectory=%q: ProtectSystem=strict would make the store read-only",
			keys["ReadWritePaths"], keys["WorkingDirectory"])
	}
}

// TestUnitVerifies runs systemd-analyze verify on the unit, with ExecStart
// pointed at the binary under test (verify checks that it is executable).
func TestUnitVerifies(t *testing.T) {
	gate.SystemdAnalyze.Require(t)
	analyze, _ := exec.LookPath("systemd-analyze")
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := testkit.Binary(t)
	path := filepath.Join(t.TempDir(), "drover.service")
	if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/drover"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// verify exits 0 on an unknown or unparsable setting; it only warns.
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
