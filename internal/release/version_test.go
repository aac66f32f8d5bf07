package release

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

func TestArtifactNames(t *testing.T) {
	for _, tc := range []struct {
		version string
		target  Target
		archive string
	}{
		{"0.1.0", Target{"linux", "amd64"}, "drover_0.1.0_linux_amd64.tar.gz"},
		{"v0.1.0", Target{"darwin", "arm64"}, "drover_0.1.0_darwin_arm64.tar.gz"},
		{"0.1.1-SNAPSHOT-6d71f6c", Target{"linux", "arm64"}, "drover_0.1.1-SNAPSHOT-6d71f6c_linux_arm64.tar.gz"},
	} {
		if got := ArchiveName(tc.version, tc.target); got != tc.archive {
			t.Errorf("ArchiveName(%q, %v) = %q, want %q", tc.version, tc.target, got, tc.archive)
		}
	}
	if got := ImageName("0.1.0", Target{"linux", "arm64"}); got != "drover_0.1.0_linux_arm64.image.tar" {
		t.Errorf("ImageName = %q", got)
	}
	var got []string
	for _, tg := range Targets {
		got = append(got, tg.OS+"/"+tg.Arch)
	}
	if strings.Join(got, " ") != "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" {
		t.Errorf("Targets = %v", got)
	}
}

func TestSnapshotVersion(t *testing.T) {
	const sha = "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	for _, tc := range []struct {
		latest string
		dirty  bool
		want   string
	}{
		{"", false, "0.0.0-SNAPSHOT-6d71f6c"},
		{"0.1.0", false, "0.1.1-SNAPSHOT-6d71f6c"},
		{"0.1.9", true, "0.1.10-SNAPSHOT-6d71f6c-dirty"},
		{"1.0.0-rc.1", false, "1.0.0-SNAPSHOT-6d71f6c"},
	} {
		got, err := SnapshotVersion(tc.latest, sha, tc.dirty)
		if err != nil || got != tc.want {
			t.Errorf("SnapshotVersion(%q, dirty %t) = %q, %v; want %q", tc.latest, tc.dirty, got, err, tc.want)
		}
		if _, err := name.NewTag(ImageRef(got)); err != nil {
			t.Errorf("%q is not an image tag: %v", got, err)
		}
	}
	if _, err := SnapshotVersion("0.1", sha, false); err == nil {
		t.Error("SnapshotVersion(\"0.1\") did not fail")
	}
}

// The -X stamps name internal/version's variables and carry the version
// with a v, as drover version prints a module version.
func TestStampLdflags(t *testing.T) {
	st := Stamp{Version: "0.1.1-SNAPSHOT-6d71f6c", Commit: "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091", Date: "2026-12-02T07:46:54Z"}
	want := "-s -w -X github.com/drover-dev/drover/internal/version.version=v0.1.1-SNAPSHOT-6d71f6c" +
		" -X github.com/drover-dev/drover/internal/version.commit=6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091" +
		" -X github.com/drover-dev/drover/internal/version.date=2026-12-02T07:46:54Z"
	if got := st.Ldflags(); got != want {
		t.Fatalf("Ldflags() =\n%s\nwant\n%s", got, want)
	}
	cmd := BuildCommand(st, Target{"darwin", "arm64"}, "/out/drover")
	args := strings.Join(cmd.Args, " ")
	if !strings.HasPrefix(args, "go build -trimpath -buildvcs=false -ldflags ") || !strings.HasSuffix(args, " -o /out/drover ./cmd/drover") {
		t.Errorf("build command = %q", args)
	}
	// Last, so they win over the caller's environment.
	if env := strings.Join(cmd.Env[len(cmd.Env)-3:], " "); env != "CGO_ENABLED=0 GOOS=darwin GOARCH=arm64" {
		t.Errorf("build env ends %q", env)
	}
}
