// Package release tests what .ci/release built, as someone installing it
// would: the checksums hold, the host's linux archive runs the demo with no
// Go and no PATH, the binaries are static and stamped, and the image
// tarballs hold drover as their non-root entrypoint. CI (.ci/run) builds a
// snapshot and points DROVER_TEST_RELEASE_DIR at it.
package release

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/testkit/gate"
)

func releaseDir(t *testing.T) string {
	t.Helper()
	gate.Release.Require(t)
	return os.Getenv("DROVER_TEST_RELEASE_DIR")
}

var checksumLine = regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)

// Every archive and image in the directory is in checksums.txt with its
// sha256, in the format sha256sum -c reads, and nothing else is.
func TestChecksums(t *testing.T) {
	dir := releaseDir(t)
	f, err := os.Open(filepath.Join(dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := checksumLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("checksums.txt line %q is not \"<sha256>  <file>\"", sc.Text())
		}
		if got := sha256File(t, filepath.Join(dir, m[2])); got != m[1] {
			t.Errorf("%s: sha256 %s, checksums.txt says %s", m[2], got, m[1])
		}
		listed[m[2]] = true
	}
	artifacts := 0
	for _, pat := range []string{"drover_*.tar.gz", "drover_*.image.tar"} {
		names, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, n := range names {
			artifacts++
			if !listed[filepath.Base(n)] {
				t.Errorf("%s is not in checksums.txt", filepath.Base(n))
			}
		}
	}
	if artifacts != 6 || len(listed) != 6 {
		t.Errorf("%d artifacts, %d checksums; want 4 archives and 2 images", artifacts, len(listed))
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "checksums.txt")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c checksums.txt: %v\n%s", err, out)
		}
	}
}

// The archive for this machine, unpacked, runs the demo to the end in an
// empty directory with an empty PATH: no Go, no git, nothing beside it.
func TestArchiveRunsTheDemo(t *testing.T) {
	dir := releaseDir(t)
	version, archive := hostArchive(t, dir)
	pkg := extractArchive(t, archive)
	for _, doc := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(pkg, doc)); err != nil {
			t.Errorf("the archive has no %s: %v", doc, err)
		}
	}
	bin := filepath.Join(pkg, "drover")
	assertStatic(t, bin, runtime.GOARCH)

	empty := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = empty
		cmd.Env = []string{"PATH=", "HOME=" + empty}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("drover %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	out := run("version")
	if !strings.Contains(out, "version:      v"+version+"\n") {
		t.Errorf("drover version does not print the stamped v%s:\n%s", version, out)
	}
	m := regexp.MustCompile(`-SNAPSHOT-([0-9a-f]{7})(-dirty)?$`).FindStringSubmatch(version)
	if m == nil {
		t.Fatalf("version %q is not a snapshot's <next>-SNAPSHOT-<commit>", version)
	}
	if !regexp.MustCompile(`(?m)^commit:\s+` + m[1] + `[0-9a-f]{33}$`).MatchString(out) {
		t.Errorf("drover version's commit is not the snapshot's %s…:\n%s", m[1], out)
	}
	if line := run("--version"); !strings.HasPrefix(line, "drover v"+version+" (commit "+m[1]) {
		t.Errorf("drover --version = %q", line)
	}

	out = run("demo", "--until-settled")
	for id, state := range map[string]string{"DRV-1": "review", "DRV-2": "review", "DRV-3": "review",
		"DRV-4": "blocked", "DRV-5": "blocked", "DRV-6": "awaiting_input"} {
		if !regexp.MustCompile(`(?m)^` + id + `\s.*\s` + state + `\s`).MatchString(out) {
			t.Errorf("the demo's %s did not settle in %s", id, state)
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", out)
	}
}

// hostArchive is the version and path of the linux archive for this
// machine's architecture.
func hostArchive(t *testing.T, dir string) (string, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("the archives run here are linux's; this is %s", runtime.GOOS)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "drover_*_linux_"+runtime.GOARCH+".tar.gz"))
	if len(names) != 1 {
		t.Fatalf("%d archives drover_*_linux_%s.tar.gz in %s, want 1", len(names), runtime.GOARCH, dir)
	}
	base := filepath.Base(names[0])
	return strings.TrimSuffix(strings.TrimPrefix(base, "drover_"), "_linux_"+runtime.GOARCH+".tar.gz"), names[0]
}

// assertStatic checks bin is an ELF executable for arch with no
// interpreter: it needs no libc (CGO_ENABLED=0).
func assertStatic(t *testing.T, bin, arch string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]; f.Machine != want {
		t.Errorf("%s is for %s, want %s (%s)", bin, f.Machine, want, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader (PT_INTERP): not a static binary", bin)
		}
	}
}
