package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// restoreBoard is a board directory with a store of five cards and a
// backup of its first three.
func restoreBoard(t *testing.T) (dir, target, backup string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	target = filepath.Join(dir, ".drover", "drover.db")
	backup = filepath.Join(dir, "backup.db")
	st := testkit.Open(t, "sqlite:"+target)
	fill(t, st, 3)
	if _, err := st.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	fill(t, st, 2)
	st.Close()
	testkit.NewWorkflow().Set("server", "port: 0").Set("dispatch", "{node: n1, poll_interval: 100ms}").Write(t, dir)
	return dir, target, backup
}

// A drover serve that starts while drover restore runs refuses to open the
// store (it would be left writing to the file restore replaces), as does
// any other opener; once the restore is done the store opens and holds
// the backup.
func TestServeStartedMidRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	dir, target, backup := restoreBoard(t)
	bin := testkit.Binary(t)
	var code int
	var stderr string
	var took time.Duration
	var openErr error
	sqlstore.SetRestoreHookForTest(func(step string) {
		if step != "copied" {
			return
		}
		_, openErr = sqlstore.Open(ctx, "sqlite:"+target)
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(sctx, bin, "serve")
		cmd.Dir = dir
		var e bytes.Buffer
		cmd.Stderr = &e
		start := time.Now()
		err := cmd.Run()
		took, stderr, code = time.Since(start), e.String(), cmd.ProcessState.ExitCode()
		if err == nil {
			code = 0
		}
	})
	t.Cleanup(func() { sqlstore.SetRestoreHookForTest(nil) })
	if _, err := sqlstore.Restore(ctx, backup, target); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(openErr, sqlstore.ErrRestoring) {
		t.Errorf("opening the store mid-restore: err = %v, want ErrRestoring", openErr)
	}
	if code == 0 || code == -1 || took > 15*time.Second || !strings.Contains(stderr, "drover restore is replacing this store") {
		t.Fatalf("serve started mid-restore: exit %d after %v, stderr:\n%s\nwant it refused at once, naming the restore", code, took, stderr)
	}
	st := testkit.Open(t, "sqlite:"+target)
	if cards := dump(t, st)["cards"]; len(cards) != 3 {
		t.Fatalf("after the restore the store has %d cards, want the backup's 3", len(cards))
	}
}

// A restore refuses while a drover process has the store open, even one
// that started after the check for live serves (a serve starting up, a
// command still running), and replaces nothing.
func TestRestoreRefusesAnOpenStore(t *testing.T) {
	ctx := context.Background()
	_, target, backup := restoreBoard(t)
	st := testkit.Open(t, "sqlite:"+target)
	_, err := sqlstore.Restore(ctx, backup, target)
	if err == nil || !strings.Contains(err.Error(), "open in another drover process") {
		t.Fatalf("restore with the store open: err = %v, want a refusal", err)
	}
	if cards := dump(t, st)["cards"]; len(cards) != 5 {
		t.Fatalf("the refused restore changed the store: %d cards, want 5", len(cards))
	}
	st.Close()
	if _, err := sqlstore.Restore(ctx, backup, target); err != nil {
		t.Fatalf("restore once the store is closed: %v", err)
	}
}
