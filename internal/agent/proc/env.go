package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RunTagKey is the environment variable that names a run (the dispatcher
// sets it on every agent and hook); the supervisor and KillTagged find a
// run's processes by it where the process tree does not tell.
const RunTagKey = "DROVER_RUN_ID"

// BaseEnvKeys are the variables every agent and hook inherits from drover's own
// environment (when set). Everything else must be passed explicitly.
var BaseEnvKeys = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// BaseEnv returns BaseEnvKeys as "KEY=value" pairs from drover's environment.
func BaseEnv() []string {
	var env []string
	for _, k := range BaseEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// lookupEnv returns the last value of key in env (later entries win, as in
// exec.Cmd).
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// resolve finds the executable for p. A path with a slash is taken as is
// (relative to dir when relative); a bare name is searched in the PATH of the
// child's env (falling back to drover's own PATH when env has none). Relative
// PATH entries are ignored, as exec.LookPath refuses them too.
func resolve(p, dir string, env []string) (string, error) {
	if p == "" {
		return "", &NotFoundError{Path: p, Err: errors.New("no command configured")}
	}
	if strings.Contains(p, "/") {
		full := p
		if !filepath.IsAbs(p) && dir != "" {
			full = filepath.Join(dir, p)
		}
		if err := executable(full); err != nil {
			return "", &NotFoundError{Path: p, Err: err}
		}
		return full, nil
	}
	pathVar, ok := lookupEnv(env, "PATH")
	if !ok {
		pathVar = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(d) {
			continue
		}
		full := filepath.Join(d, p)
		if executable(full) == nil {
			return full, nil
		}
	}
	return "", &NotFoundError{Path: p, Err: fmt.Errorf("not found in PATH %q", pathVar)}
}

// executable reports why path cannot be executed, or nil.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable (mode %v)", path, fi.Mode().Perm())
	}
	return nil
}
