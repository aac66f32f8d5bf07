// Package version says which drover this is: its version, the commit and time
// it was built from, the Go release that built it and the store schema it
// expects. drover version, GET /api/v1/state, /metrics (drover_build_info)
// and the dashboard footer all read it from Get.
//
// The values come from the build information Go stamps into every binary
// (runtime/debug.ReadBuildInfo: the module version and vcs.revision,
// vcs.time, vcs.modified). A release build may set them explicitly:
//
//	go build -ldflags "\
//	  -X github.com/drover-dev/drover/internal/version.version=v1.2.0 \
//	  -X github.com/drover-dev/drover/internal/version.commit=$(git rev-parse HEAD) \
//	  -X github.com/drover-dev/drover/internal/version.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
//	  -o drover ./cmd/drover
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// Set with -ldflags -X at release builds; empty means "read the build info".
var version, commit, date string

// Unknown stands for a commit or date the build did not record (go run, go
// test, a build outside a VCS checkout).
const Unknown = "unknown"

// Info describes this build.
type Info struct {
	// Version is the release (v1.2.0), Go's pseudo-version for a build from
	// a checkout (v0.0.0-20261201084455-6d71f6c1a2b3+dirty), or "devel".
	Version string `json:"version"`
	// Commit is the full VCS revision, or Unknown.
	Commit string `json:"commit"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified"`
	// Date is when the commit was made (vcs.time) or, for a release build,
	// the build date set with -ldflags; RFC 3339 in UTC, or Unknown.
	Date string `json:"date"`
	// GoVersion is the Go release that built the binary (go1.26.8).
	GoVersion string `json:"go_version"`
	// Schema is the store schema version this binary migrates stores to;
	// a store at a higher version is refused.
	Schema int64 `json:"schema"`
}

// Get returns this build's Info (read once per process).
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, version, commit, date)
})

// fromBuild reads bi (nil when the binary has none), letting the non-empty
// overrides win.
func fromBuild(bi *debug.BuildInfo, ver, rev, at string) Info {
	in := Info{Version: "devel", Commit: Unknown, Date: Unknown, GoVersion: runtime.Version(), Schema: sqlstore.SchemaVersion()}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			in.Version = v
		}
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.time":
				in.Date = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	for _, o := range []struct {
		dst *string
		v   string
	}{{&in.Version, ver}, {&in.Commit, rev}, {&in.Date, at}} {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	return in
}

// ShortCommit is the first 12 characters of the commit, with "+dirty" when
// the checkout was modified.
func (in Info) ShortCommit() string {
	c := in.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if in.Modified {
		c += "+dirty"
	}
	return c
}

// String is the one-line form drover --version prints.
func (in Info) String() string {
	return fmt.Sprintf("drover %s (commit %s, %s, %s, store schema %d)", in.Version, in.ShortCommit(), in.Date, in.GoVersion, in.Schema)
}
