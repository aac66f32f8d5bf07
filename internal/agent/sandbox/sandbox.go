// Package sandbox wraps an agent's command line in Debian's bubblewrap
// (bwrap): Linux namespaces of its own (user, pid, ipc, uts, cgroup and, by
// the profile's network key, net), the system's directories read-only, the
// card's workspace read-write, a fresh private home and /tmp, a fresh /proc,
// and nothing else of the host: not drover's store, logs or other
// workspaces, nor the operator's home. It only builds argument vectors and
// checks paths; package proc runs them.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// KindBwrap is the one sandbox kind.
const KindBwrap = "bwrap"

// Network modes (the sandbox's network key).
const (
	NetworkOn       = "on"       // the host's network (the default): agents need their provider
	NetworkOff      = "off"      // a network namespace of the run's own: nothing outside it
	NetworkLoopback = "loopback" // the same in bwrap: only the namespace's own lo, not the host's
)

// Kinds and NetworkModes are the values the keys take.
var (
	Kinds        = []string{KindBwrap}
	NetworkModes = []string{NetworkOn, NetworkOff, NetworkLoopback}
)

// BwrapEnv names the bwrap program drover runs ("bwrap" on drover's PATH
// when unset); tests point it at a missing one.
const BwrapEnv = "DROVER_BWRAP"

// Config is a profile's sandbox key.
type Config struct {
	Kind    string   `json:"kind" yaml:"kind"`
	Network string   `json:"network,omitempty" yaml:"network"`
	Read    []string `json:"read,omitempty" yaml:"read"`
	Write   []string `json:"write,omitempty" yaml:"write"`
}

// Bind is one more host path the run sees, at the same path inside.
type Bind struct {
	Path string
	RW   bool // read-write; else read-only
	Try  bool // skip it when it does not exist
}

// Run is what one run's sandbox is made of besides the profile's key.
type Run struct {
	Workspace string // the card's workspace: read-write, the working directory
	Home      string // the path HOME names inside: a fresh empty directory, or HomeDir
	// HomeDir, when set, is the host directory seen at Home, read-write:
	// the card's own home, kept between its runs so a CLI's session (a
	// resume after a human's answer) survives. "" = a fresh tmpfs.
	HomeDir string
	Program string // the resolved program: the file alone is bound read-only when not already visible
	Binds   []Bind // the launcher's extra paths (the prompt file, drover's MCP config, the run's capability)
}

// SystemDirs are the host's directories every sandbox sees read-only (those
// that exist). /etc is whole (CLIs need passwd, resolv.conf, certificates);
// the files in MaskedFiles are hidden.
var SystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// MaskedFiles are system files replaced by an empty one inside.
var MaskedFiles = []string{"/etc/shadow", "/etc/gshadow"}

// Program is the bwrap program to run: $DROVER_BWRAP, else "bwrap".
func Program() string {
	if p := os.Getenv(BwrapEnv); p != "" {
		return p
	}
	return "bwrap"
}

// Args are bwrap's arguments for running argv (argv[0] an absolute path)
// under c for run r: options, then "--", then argv.
func (c Config) Args(r Run, argv []string) []string {
	a := []string{"--unshare-all", "--die-with-parent", "--new-session"}
	if c.Network == "" || c.Network == NetworkOn {
		a = append(a, "--share-net")
	}
	for _, d := range SystemDirs {
		a = append(a, "--ro-bind-try", d, d)
	}
	for _, f := range MaskedFiles {
		if _, err := os.Stat(f); err == nil {
			a = append(a, "--ro-bind", os.DevNull, f)
		}
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp")
	switch {
	case r.Home != "" && r.HomeDir != "":
		a = append(a, "--bind", r.HomeDir, r.Home)
	case r.Home != "":
		a = append(a, "--tmpfs", r.Home)
	}
	for _, f := range programFiles(r.Program) {
		if !visible(f, r.Workspace) {
			a = append(a, "--ro-bind", f, f)
		}
	}
	for _, p := range c.Read {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range c.Write {
		a = append(a, "--bind-try", p, p)
	}
	for _, b := range r.Binds {
		opt := "--ro-bind"
		if b.RW {
			opt = "--bind"
		}
		if b.Try {
			opt += "-try"
		}
		a = append(a, opt, b.Path, b.Path)
	}
	if r.Workspace != "" {
		a = append(a, "--bind", r.Workspace, r.Workspace, "--chdir", r.Workspace)
	}
	// The root is bwrap's own tmpfs, holding the mount points (the
	// workspace's parents among them): read-only, so nothing is written
	// there by mistake.
	a = append(a, "--remount-ro", "/")
	return append(append(a, "--"), argv...)
}

// programFiles are the program's path and, for a symlink, its real file.
// The file alone is bound, never its directory: a ./agent.sh beside
// WORKFLOW.md sits beside drover's .drover directory too. A program that
// needs files beside it (an npm CLI's package) names them in read.
func programFiles(p string) []string {
	if p == "" || !filepath.IsAbs(p) {
		return nil
	}
	fs := []string{p}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		fs = append(fs, real)
	}
	return fs
}

// visible reports whether path is already seen inside: under a system
// directory or the workspace.
func visible(path, workspace string) bool {
	for _, d := range append(slices.Clone(SystemDirs), workspace) {
		if d != "" && within(path, d) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or under it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Expand resolves a read or write entry: ~ and ~/… against home; the path
// must then be absolute and clean.
func Expand(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

// forbidden are the trees a read or write entry may not name or be under:
// the kernel's and the sandbox's own.
var forbidden = []string{"/proc", "/sys", "/dev"}

// CheckPath says why p (expanded) cannot be a read or write entry, or "".
// Refused: relative paths, "..", the root itself, /proc, /sys, /dev, the
// operator's home itself, and a path that is or holds one of hidden (the
// directory of drover's store, the workspace root): the sandbox exists to
// hide those.
func CheckPath(p, home string, hidden []string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.ContainsAny(p, "\x00\n"):
		return "holds a NUL or a newline"
	case !filepath.IsAbs(p):
		return fmt.Sprintf("%q is not absolute: write /abs/path or ~/path", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Sprintf("%q has a .. component: write the path it means", p)
	case filepath.Clean(p) == "/":
		return "is the whole file system: name the directories the agent needs"
	case home != "" && filepath.Clean(p) == filepath.Clean(home):
		return fmt.Sprintf("%q is the operator's whole home: name the files the agent needs (e.g. ~/.claude.json)", p)
	}
	for _, h := range hidden {
		if h != "" && within(filepath.Clean(h), filepath.Clean(p)) {
			return fmt.Sprintf("%q holds %s, which the sandbox hides from agents", p, h)
		}
	}
	for _, f := range forbidden {
		if within(filepath.Clean(p), f) {
			return fmt.Sprintf("%q is under %s, which the sandbox provides itself", p, f)
		}
	}
	return ""
}
