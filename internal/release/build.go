package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MainPackage is the package a release builds.
const MainPackage = "./cmd/drover"

// BuildCommand is the go build of t's static, stamped binary at out, run in
// the module's root: no cgo, no local paths (-trimpath), no VCS stamping
// (the -X stamps carry the commit; a GOFLAGS=-buildvcs=… setting cannot make
// two builds of one commit differ).
func BuildCommand(st Stamp, t Target, out string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", st.Ldflags(), "-o", out, MainPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	return cmd
}

// Build builds every target's binary into dir/<os>_<arch>/drover and
// returns their paths by target.
func Build(root, dir string, st Stamp, targets []Target) (map[Target]string, error) {
	bins := map[Target]string{}
	for _, t := range targets {
		out := filepath.Join(dir, t.OS+"_"+t.Arch, "drover")
		cmd := BuildCommand(st, t, out)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build for %s/%s: %v\n%s", t.OS, t.Arch, err, strings.TrimSpace(string(b)))
		}
		bins[t] = out
	}
	return bins, nil
}
