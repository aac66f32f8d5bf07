package release

import (
	"strings"
	"testing"
	"time"
)

func TestMakePlan(t *testing.T) {
	const head = "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	const other = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const released = "## [Unreleased]\n- coming\n\n## [0.2.0] - 2026-12-24\n- two\n\n## [0.1.0] - 2026-12-02\n- one\n"
	at := time.Date(2026, 12, 2, 7, 46, 54, 0, time.UTC)
	tags := func(m map[string]string) func(string) string { return func(tag string) string { return m[tag] } }
	for _, tc := range []struct {
		name      string
		changelog string
		dirty     bool
		snapshot  bool
		tags      map[string]string
		version   string
		notes     string
		err       string
	}{
		{name: "release at its tag", changelog: released, tags: map[string]string{"v0.2.0": head}, version: "0.2.0", notes: "- two\n"},
		{name: "release without its tag", changelog: released, err: "there is no tag v0.2.0: git tag -a v0.2.0"},
		{name: "release after its tag", changelog: released, tags: map[string]string{"v0.2.0": other}, err: "tag v0.2.0 is commit aaaaaaaaaaaa, not HEAD 6d71f6c1a2b3"},
		{name: "release from a dirty tree", changelog: released, dirty: true, tags: map[string]string{"v0.2.0": head}, err: "uncommitted changes"},
		{name: "release with only Unreleased", changelog: "## [Unreleased]\n- x\n", err: "no release section"},
		{name: "release of an empty section", changelog: "## [0.1.0] - 2026-12-02\n", tags: map[string]string{"v0.1.0": head}, err: "[0.1.0] is empty"},
		{name: "release of a bad changelog", changelog: "## Unreleased\n", err: `"## Unreleased" is not`},
		{name: "snapshot, no tag needed", changelog: released, snapshot: true, version: "0.2.1-SNAPSHOT-6d71f6c",
			notes: "Snapshot 0.2.1-SNAPSHOT-6d71f6c of commit " + head + ", not a release.\n\n- coming\n"},
		{name: "snapshot of a dirty tree", changelog: released, snapshot: true, dirty: true, version: "0.2.1-SNAPSHOT-6d71f6c-dirty"},
		{name: "snapshot before any release", changelog: "# Changelog\n", snapshot: true, version: "0.0.0-SNAPSHOT-6d71f6c",
			notes: "Snapshot 0.0.0-SNAPSHOT-6d71f6c of commit " + head + ", not a release.\n"},
		{name: "snapshot, nothing unreleased", changelog: "## [Unreleased]\n\n## [0.1.0] - 2026-12-02\n- one\n", snapshot: true, version: "0.1.1-SNAPSHOT-6d71f6c",
			notes: "Snapshot 0.1.1-SNAPSHOT-6d71f6c of commit " + head + ", not a release. Nothing under [Unreleased] since 0.1.0.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			co := Checkout{Commit: head, Time: at, Dirty: tc.dirty}
			p, err := MakePlan(tc.changelog, co, tc.snapshot, tags(tc.tags))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Stamp{Version: tc.version, Commit: head, Date: "2026-12-02T07:46:54Z"}
			if p.Stamp != want || !p.Time.Equal(at) || p.Snapshot != tc.snapshot {
				t.Fatalf("plan = %+v, want stamp %+v at %s", p, want, at)
			}
			if tc.notes != "" && p.Notes != tc.notes {
				t.Fatalf("notes = %q, want %q", p.Notes, tc.notes)
			}
		})
	}
}
