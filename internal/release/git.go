package release

import (
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Checkout is what a release reads from the git work tree it is built in.
type Checkout struct {
	Commit string    // HEAD's full hash
	Time   time.Time // HEAD's committer time
	Dirty  bool      // uncommitted changes (untracked files included)
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ReadCheckout reads HEAD and the work tree's state in dir.
func ReadCheckout(dir string) (Checkout, error) {
	var c Checkout
	var err error
	if c.Commit, err = git(dir, "rev-parse", "HEAD"); err != nil {
		return c, err
	}
	at, err := git(dir, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return c, err
	}
	var sec int64
	if _, err := fmt.Sscan(at, &sec); err != nil {
		return c, fmt.Errorf("git log: commit time %q: %v", at, err)
	}
	c.Time = time.Unix(sec, 0).UTC()
	status, err := git(dir, "status", "--porcelain")
	if err != nil {
		return c, err
	}
	c.Dirty = status != ""
	return c, nil
}

// TagCommit is the commit tag points at in dir, empty when there is no such tag.
func TagCommit(dir, tag string) string {
	out, err := git(dir, "rev-parse", "--verify", "--quiet", "refs/tags/"+tag+"^{commit}")
	if err != nil {
		return ""
	}
	return out
}
