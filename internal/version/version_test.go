package version

import (
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/store/sqlstore"
)

func TestFromBuildReadsVCSStamps(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201084455-6d71f6c1a2b3+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091"},
			{Key: "vcs.time", Value: "2026-12-01T08:44:55Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	got := fromBuild(bi, "", "", "")
	want := Info{Version: "v0.0.0-20261201084455-6d71f6c1a2b3+dirty", Commit: "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091",
		Modified: true, Date: "2026-12-01T08:44:55Z", GoVersion: "go1.26.8", Schema: sqlstore.SchemaVersion()}
	if got != want {
		t.Fatalf("fromBuild = %+v\nwant %+v", got, want)
	}
	if s, w := got.String(), fmt.Sprintf("drover v0.0.0-20261201084455-6d71f6c1a2b3+dirty (commit 6d71f6c1a2b3+dirty, 2026-12-01T08:44:55Z, go1.26.8, store schema %d)", sqlstore.SchemaVersion()); s != w {
		t.Fatalf("String() = %q", s)
	}
}

func TestLdflagsOverridesWin(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "aaaa"}}}
	got := fromBuild(bi, "v1.2.0", "bbbb", "2026-12-24T00:00:00Z")
	if got.Version != "v1.2.0" || got.Commit != "bbbb" || got.Date != "2026-12-24T00:00:00Z" {
		t.Fatalf("overrides lost: %+v", got)
	}
}

func TestNoBuildInfo(t *testing.T) {
	got := fromBuild(nil, "", "", "")
	if got.Version != "devel" || got.Commit != Unknown || got.Date != Unknown || !strings.HasPrefix(got.GoVersion, "go") || got.Schema < 1 {
		t.Fatalf("fromBuild(nil) = %+v", got)
	}
}
