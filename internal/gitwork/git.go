package gitwork

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
)

// GitError is a git command that failed: the command (without secrets),
// its exit code and what it wrote to stderr.
type GitError struct {
	Args []string // git's arguments, e.g. fetch --prune origin
	Code int      // exit code (-1 when git did not run)
	// Remote: the command talks to the repository (fetch, ls-remote, push);
	// with Code 128 the failure is one of reaching it (Transport).
	Remote bool
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if len(msg) > 600 {
		msg = msg[:600] + "…"
	}
	return "git " + strings.Join(e.Args, " ") + ": " + oneLine(msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// Transport reports whether err is git failing to reach or read the
// repository (a fetch, ls-remote or push that exited 128: no route, no
// such host, refused, no such repository, authentication). A refused
// push or a local failure is not.
func Transport(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && ge.Remote && ge.Code == 128
}

// keptEnv are the variables of drover's environment git may see: where
// programs are, the home ssh reads its keys from, an ssh agent, proxies.
// Everything else (GIT_DIR, GIT_WORK_TREE, an operator's GIT_* settings) is
// left out so a command means the same on every machine.
var keptEnv = []string{"PATH", "HOME", "TMPDIR", "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND",
	"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "all_proxy"}

// gitEnv is the environment of every git drover runs: no prompt for a
// password (a missing credential fails instead of hanging), no system or
// user config (no aliases, hooks paths, signing or identities of the
// operator's), C messages, and the token, when there is one, as an HTTP
// header given through GIT_CONFIG_* variables: never on a command line,
// never in a file.
func gitEnv(env []string, repo, tokenEnv string) []string {
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	out := []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"LC_ALL=C", "LANG=C", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_SSH_VARIANT=auto"}
	for _, k := range keptEnv {
		if v, ok := vals[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	if _, ok := vals["PATH"]; !ok {
		out = append(out, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	var cfg [][2]string
	// A hook of the repository never runs drover's commands, and drover's
	// commits are never signed by a key it does not know of.
	cfg = append(cfg, [2]string{"core.hooksPath", "/dev/null"}, [2]string{"commit.gpgSign", "false"},
		[2]string{"protocol.file.allow", "always"})
	if tok := vals[tokenEnv]; tokenEnv != "" && tok != "" && isHTTP(repo) {
		auth := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
		// Scoped to the repository's URL: a rewrite (url.*.insteadOf,
		// remote.*.pushurl) written into the shared mirror's config by
		// anything with access to it sends no token elsewhere.
		cfg = append(cfg, [2]string{"http." + repo + ".extraHeader", "Authorization: Basic " + auth})
	}
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return out
}

func isHTTP(repo string) bool {
	return strings.HasPrefix(repo, "https://") || strings.HasPrefix(repo, "http://")
}

// redact takes a password or token written into a URL out of s.
func redact(repo, s string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return s
	}
	if p, ok := u.User.Password(); ok && p != "" {
		s = strings.ReplaceAll(s, p, "***")
	}
	return s
}

// runner runs git with one environment.
type runner struct {
	env  []string
	repo string
}

var remoteOps = map[string]bool{"fetch": true, "ls-remote": true, "push": true, "clone": true, "remote": true}

// git runs git -C dir args… and returns its stdout.
func (r runner) git(ctx context.Context, dir string, args ...string) (string, error) {
	full := args
	if dir != "" {
		full = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return stdout.String(), &GitError{Args: args, Code: code, Remote: len(args) > 0 && remoteOps[args[0]],
			Stderr: redact(r.repo, stderr.String()), Err: err}
	}
	return stdout.String(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
