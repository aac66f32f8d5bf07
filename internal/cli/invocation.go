package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// invokedAs is how the user started drover, as os.Args[0] says, for the
// commands drover prints for them to run next (init's "next:" lines): a
// `./drover` built in the clone is not on PATH, and `go run` leaves a binary
// in a go-build temporary directory that is gone after the run.
func invokedAs() string {
	self, _ := os.Executable()
	return invocation(os.Args[0], self, exec.LookPath)
}

// invocation is invokedAs's rule, pure: arg0 is os.Args[0], self this
// binary's path, lookPath exec.LookPath.
//   - a binary under go-build…/exe/ was built by `go run`: "go run ./cmd/drover";
//   - a bare name was found on PATH: that name;
//   - a path (./drover, /opt/drover/bin/drover): "drover" when PATH resolves
//     drover to this very binary, else the path as typed.
func invocation(arg0, self string, lookPath func(string) (string, error)) string {
	if isGoRunBinary(arg0) || isGoRunBinary(self) {
		return "go run ./cmd/drover"
	}
	if !strings.ContainsRune(arg0, filepath.Separator) && !strings.ContainsRune(arg0, '/') {
		return arg0
	}
	if onPath, err := lookPath("drover"); err == nil && sameFile(onPath, arg0) {
		return "drover"
	}
	return shellQuote(arg0)
}

// isGoRunBinary: `go run` links into $GOTMPDIR/go-buildNNN/bNNN/exe/NAME.
func isGoRunBinary(p string) bool {
	dir := filepath.ToSlash(filepath.Dir(p))
	return strings.HasSuffix(dir, "/exe") && strings.Contains(dir, "/go-build")
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// shellQuote quotes p for a POSIX shell when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.IndexFunc(p, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
