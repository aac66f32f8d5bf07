// Package release builds drover's release artifacts: stamped static binaries
// for linux and darwin on amd64 and arm64, their archives and checksums, a
// container image per linux architecture and the release notes. .ci/release
// runs it (it builds and runs ./internal/release/cmd/release DIR [--snapshot]).
package release

import (
	"fmt"
	"regexp"
	"strings"
)

// Section is one "## [...]" section of CHANGELOG.md.
type Section struct {
	// Version is "Unreleased" or a semantic version without the leading v
	// (0.1.0, 1.0.0-rc.1).
	Version string
	// Date is the release date (YYYY-MM-DD); empty for Unreleased.
	Date string
	// Body is the section's text below its heading, trimmed.
	Body string
}

// Unreleased names the section of changes not released yet.
const Unreleased = "Unreleased"

var (
	unreleasedHeading = regexp.MustCompile(`^## \[Unreleased\]\s*$`)
	versionHeading    = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - (\d{4}-\d{2}-\d{2})\s*$`)
	// linkDef is a keep-a-changelog link reference ([0.1.0]: https://…).
	linkDef = regexp.MustCompile(`^\[[^\]]+\]: \S+\s*$`)
)

// ParseChangelog reads CHANGELOG.md's sections in file order. A "## " line
// that is neither "## [Unreleased]" nor "## [X.Y.Z] - YYYY-MM-DD" is an
// error, so a mistyped heading cannot hide a release.
func ParseChangelog(text string) ([]Section, error) {
	var secs []Section
	var body []string
	flush := func() {
		// Link references at a section's end (the file's, after the last
		// section) are not part of its text.
		for len(body) > 0 && (linkDef.MatchString(body[len(body)-1]) || strings.TrimSpace(body[len(body)-1]) == "") {
			body = body[:len(body)-1]
		}
		if len(secs) > 0 {
			secs[len(secs)-1].Body = strings.TrimSpace(strings.Join(body, "\n"))
		}
		body = nil
	}
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "## ") {
			if len(secs) > 0 {
				body = append(body, line)
			}
			continue
		}
		flush()
		switch m := versionHeading.FindStringSubmatch(line); {
		case unreleasedHeading.MatchString(line):
			secs = append(secs, Section{Version: Unreleased})
		case m != nil:
			secs = append(secs, Section{Version: m[1], Date: m[2]})
		default:
			return nil, fmt.Errorf("CHANGELOG.md line %d: %q is not \"## [Unreleased]\" or \"## [X.Y.Z] - YYYY-MM-DD\"", i+1, line)
		}
	}
	flush()
	seen := map[string]bool{}
	for _, s := range secs {
		if seen[s.Version] {
			return nil, fmt.Errorf("CHANGELOG.md: two sections for [%s]", s.Version)
		}
		seen[s.Version] = true
	}
	return secs, nil
}

// Latest is the first versioned section (the newest release), or false when
// the changelog has none.
func Latest(secs []Section) (Section, bool) {
	for _, s := range secs {
		if s.Version != Unreleased {
			return s, true
		}
	}
	return Section{}, false
}

// Find returns the section for version (or Unreleased).
func Find(secs []Section, version string) (Section, bool) {
	for _, s := range secs {
		if s.Version == version {
			return s, true
		}
	}
	return Section{}, false
}
