package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/agent/sandbox"
)

// A sandboxed process whose bwrap is missing does not start: it never
// runs unsandboxed.
func TestSandboxWithoutBwrapDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(sandbox.BwrapEnv, filepath.Join(dir, "no-such-bwrap"))
	marker := filepath.Join(dir, "ran")
	ex, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "touch " + marker}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &sandbox.Config{Kind: sandbox.KindBwrap}})
	var nf *NotFoundError
	if !errors.As(err, &nf) || ex.Code != -1 {
		t.Fatalf("Run = %+v, %v; want a *NotFoundError", ex, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran without its sandbox")
	}
}
