package testkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// CLI runs the drover binary (Binary) as a user would: in Dir, with Env
// (nil: this process's environment) and Prefix before every command's
// arguments (e.g. --store DSN).
type CLI struct {
	T      testing.TB
	Dir    string
	Env    []string
	Prefix []string
}

// Run runs one command with stdin (may be nil) and returns what it printed
// and its exit code; a binary that could not run at all fails the test.
func (c CLI) Run(stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	c.T.Helper()
	cmd := exec.Command(Binary(c.T), append(append([]string{}, c.Prefix...), args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, c.Env, stdin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			c.T.Fatalf("drover %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// OK runs a command that must succeed and returns its stdout.
func (c CLI) OK(args ...string) string {
	c.T.Helper()
	out, errOut, code := c.Run(nil, args...)
	if code != 0 {
		c.T.Fatalf("drover %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// JSON runs a read command with --json and decodes its stdout into v.
func (c CLI) JSON(v any, args ...string) {
	c.T.Helper()
	out := c.OK(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.T.Fatalf("drover %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}
