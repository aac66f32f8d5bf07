package release

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseChangelog(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Section
		err        string
	}{
		{name: "unreleased and two releases, link references dropped", text: `# Changelog

intro

## [Unreleased]

## [0.2.0] - 2026-12-24

### Added
- a thing, see [docs](docs/x.md)

## [0.1.0] - 2026-12-02
- first

[Unreleased]: https://example.com/compare/v0.2.0...HEAD
[0.2.0]: https://example.com/v0.2.0
`, want: []Section{{Version: Unreleased}, {Version: "0.2.0", Date: "2026-12-24", Body: "### Added\n- a thing, see [docs](docs/x.md)"}, {Version: "0.1.0", Date: "2026-12-02", Body: "- first"}}},
		{name: "pre-release", text: "## [1.0.0-rc.1] - 2027-01-02\n- x\n", want: []Section{{Version: "1.0.0-rc.1", Date: "2027-01-02", Body: "- x"}}},
		{name: "a link reference inside a section stays", text: "## [0.1.0] - 2026-12-02\n- see [a]\n\n[a]: https://a\n\nmore\n", want: []Section{{Version: "0.1.0", Date: "2026-12-02", Body: "- see [a]\n\n[a]: https://a\n\nmore"}}},
		{name: "no sections", text: "# Changelog\n", want: nil},
		{name: "old unbracketed heading", text: "## Unreleased\n", err: `line 1: "## Unreleased"`},
		{name: "heading without a date", text: "## [Unreleased]\n## [0.1.0]\n", err: `line 2: "## [0.1.0]"`},
		{name: "v in the version", text: "## [v0.1.0] - 2026-12-02\n", err: `"## [v0.1.0] - 2026-12-02"`},
		{name: "a version twice", text: "## [0.1.0] - 2026-12-02\n## [0.1.0] - 2026-12-03\n", err: "two sections for [0.1.0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChangelog(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// The repository's own CHANGELOG.md: [Unreleased] on top, then releases
// newest first, each with text: what .ci/release reads its version and notes
// from.
func TestRepositoryChangelog(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ParseChangelog(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) < 2 || secs[0].Version != Unreleased {
		t.Fatalf("CHANGELOG.md's sections = %v, want [Unreleased] first and at least one release", secs)
	}
	prev := ""
	for _, s := range secs[1:] {
		if s.Body == "" {
			t.Errorf("[%s] is empty", s.Version)
		}
		if prev != "" && s.Date > prev {
			t.Errorf("[%s] (%s) comes after a release dated %s: newest first", s.Version, s.Date, prev)
		}
		prev = s.Date
		if !strings.Contains(string(b), "\n["+s.Version+"]: https://") {
			t.Errorf("no link reference [%s]: at the end of CHANGELOG.md", s.Version)
		}
	}
}
