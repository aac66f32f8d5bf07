package release

import (
	"fmt"
	"time"
)

// Plan is what one run of the release builds.
type Plan struct {
	Stamp    Stamp
	Snapshot bool
	// Notes is the release notes: the CHANGELOG section of the version (for
	// a snapshot, the [Unreleased] section).
	Notes string
	// Time stamps every file in the archives and the image: the commit's
	// time, so the same commit builds the same bytes.
	Time time.Time
}

// MakePlan decides the version and notes. A release takes its version from
// the newest versioned section of the changelog and is built only from a
// clean work tree whose HEAD is tagged v<version>; a snapshot is
// <next>-SNAPSHOT-<commit> (see SnapshotVersion) and needs neither a tag nor
// a clean tree. tagCommit returns the commit a tag points at, or "".
func MakePlan(changelog string, co Checkout, snapshot bool, tagCommit func(tag string) string) (Plan, error) {
	secs, err := ParseChangelog(changelog)
	if err != nil {
		return Plan{}, err
	}
	latest, released := Latest(secs)
	p := Plan{Snapshot: snapshot, Time: co.Time, Stamp: Stamp{Commit: co.Commit, Date: co.Time.UTC().Format(time.RFC3339)}}
	if snapshot {
		if p.Stamp.Version, err = SnapshotVersion(latest.Version, co.Commit, co.Dirty); err != nil {
			return Plan{}, err
		}
		p.Notes = snapshotNotes(secs, latest, released, p.Stamp)
		return p, nil
	}
	if !released {
		return Plan{}, fmt.Errorf("CHANGELOG.md has no release section: rename [Unreleased]'s changes to \"## [X.Y.Z] - YYYY-MM-DD\" (or build with --snapshot)")
	}
	if latest.Body == "" {
		return Plan{}, fmt.Errorf("CHANGELOG.md: the section [%s] is empty", latest.Version)
	}
	if co.Dirty {
		return Plan{}, fmt.Errorf("the work tree has uncommitted changes: a release is built from a clean checkout of its tag (or build with --snapshot)")
	}
	tag := "v" + latest.Version
	switch at := tagCommit(tag); at {
	case "":
		return Plan{}, fmt.Errorf("CHANGELOG.md's newest release is %s but there is no tag %s: git tag -a %s -m 'drover %s' (or build with --snapshot)", latest.Version, tag, tag, latest.Version)
	case co.Commit:
	default:
		return Plan{}, fmt.Errorf("tag %s is commit %.12s, not HEAD %.12s: check out %s, or add a section for the new release to CHANGELOG.md", tag, at, co.Commit, tag)
	}
	p.Stamp.Version = latest.Version
	p.Notes = latest.Body + "\n"
	return p, nil
}

func snapshotNotes(secs []Section, latest Section, released bool, st Stamp) string {
	head := fmt.Sprintf("Snapshot %s of commit %s, not a release.", st.Version, st.Commit)
	if un, ok := Find(secs, Unreleased); ok && un.Body != "" {
		return head + "\n\n" + un.Body + "\n"
	}
	if released {
		return head + " Nothing under [Unreleased] since " + latest.Version + ".\n"
	}
	return head + "\n"
}
