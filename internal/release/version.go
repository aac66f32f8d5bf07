package release

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Target is one platform a release builds for.
type Target struct{ OS, Arch string }

// Targets are the platforms a release ships, in the order they are built.
var Targets = []Target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// ArchiveName is the archive holding t's binary: drover_<version>_<os>_<arch>.tar.gz,
// the version without a leading v.
func ArchiveName(version string, t Target) string {
	return fmt.Sprintf("drover_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), t.OS, t.Arch)
}

// ImageName is the container image tarball for a linux target:
// drover_<version>_linux_<arch>.image.tar.
func ImageName(version string, t Target) string {
	return fmt.Sprintf("drover_%s_%s_%s.image.tar", strings.TrimPrefix(version, "v"), t.OS, t.Arch)
}

// Stamp is what a release build writes into internal/version.
type Stamp struct {
	// Version without the leading v (0.1.0, 0.1.1-SNAPSHOT-6d71f6c); the
	// binary reports it with a v, as Go's module versions are written.
	Version string
	Commit  string // the full commit hash
	Date    string // the commit's time, RFC 3339 in UTC
}

// versionPkg is where the stamped variables live (see internal/version).
const versionPkg = "github.com/drover-dev/drover/internal/version"

// Ldflags are the linker flags of a release build: no symbol table or DWARF,
// and the three -X stamps internal/version reads.
func (s Stamp) Ldflags() string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", versionPkg + ".version=v" + s.Version,
		"-X", versionPkg + ".commit=" + s.Commit,
		"-X", versionPkg + ".date=" + s.Date,
	}, " ")
}

var semver = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$`)

// NextPatch is the version after latest: the patch bumped (0.1.0 → 0.1.1),
// a pre-release's own version (1.0.0-rc.1 → 1.0.0), 0.0.0 when there is no
// release yet (latest empty).
func NextPatch(latest string) (string, error) {
	if latest == "" {
		return "0.0.0", nil
	}
	m := semver.FindStringSubmatch(latest)
	if m == nil {
		return "", fmt.Errorf("version %q is not X.Y.Z", latest)
	}
	if m[4] != "" {
		return m[1] + "." + m[2] + "." + m[3], nil
	}
	patch, _ := strconv.Atoi(m[3])
	return fmt.Sprintf("%s.%s.%d", m[1], m[2], patch+1), nil
}

// SnapshotVersion is <next>-SNAPSHOT-<7-character commit>, with -dirty when
// the work tree has uncommitted changes. Every character is one a container
// image tag and a semantic version's pre-release allow.
func SnapshotVersion(latest, commit string, dirty bool) (string, error) {
	next, err := NextPatch(latest)
	if err != nil {
		return "", err
	}
	if len(commit) < 7 {
		return "", fmt.Errorf("commit %q is shorter than 7 characters", commit)
	}
	v := next + "-SNAPSHOT-" + commit[:7]
	if dirty {
		v += "-dirty"
	}
	return v, nil
}
