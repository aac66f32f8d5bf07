package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// droverPkg is the command the end-to-end tests run.
const droverPkg = "github.com/drover-dev/drover/cmd/drover"

// build is the one build of cmd/drover in this test process.
var build struct {
	once sync.Once
	dir  string // the temporary directory holding the binary
	path string
	err  error
}

// Binary returns the path of cmd/drover, built with `go build` the first
// time any test of the process asks (later calls, also from parallel tests,
// wait for and reuse that build). A failed build fails t with the compiler's
// output. Call Main from TestMain so the binary is removed afterwards.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "drover-testkit-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.dir = dir
		build.path = filepath.Join(dir, "drover")
		out, err := exec.Command("go", "build", "-o", build.path, droverPkg).CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build %s: %v\n%s", droverPkg, err, out)
		}
	})
	if build.err != nil {
		t.Fatalf("testkit: cannot build the drover binary under test: %v", build.err)
	}
	return build.path
}

// Main runs the package's tests and then removes the binary Binary built,
// exiting with the tests' code. Call it as the whole body of TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}
