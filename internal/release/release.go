package release

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// NotesName is the release notes file of a release directory.
const NotesName = "release-notes.md"

// Run builds the release of the module at root into dir (created; it must be
// empty) and reports each step to log. It returns the plan it built.
func Run(root, dir string, snapshot bool, log io.Writer) (Plan, error) {
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return Plan{}, err
	}
	co, err := ReadCheckout(root)
	if err != nil {
		return Plan{}, err
	}
	p, err := MakePlan(string(changelog), co, snapshot, func(tag string) string { return TagCommit(root, tag) })
	if err != nil {
		return Plan{}, err
	}
	ca, err := FindCABundle()
	if err != nil {
		return Plan{}, err
	}
	if err := emptyDir(dir); err != nil {
		return Plan{}, err
	}
	fmt.Fprintf(log, "release: drover %s (commit %.12s, %s)\n", p.Stamp.Version, p.Stamp.Commit, p.Stamp.Date)
	tmp, err := os.MkdirTemp("", "drover-release-")
	if err != nil {
		return Plan{}, err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	bins, err := Build(root, tmp, p.Stamp, Targets)
	if err != nil {
		return Plan{}, err
	}
	fmt.Fprintf(log, "release: built %d binaries in %.1fs\n", len(bins), time.Since(start).Seconds())
	start = time.Now()
	names, err := writeArtifacts(root, dir, ca, p, bins)
	if err != nil {
		return Plan{}, err
	}
	fmt.Fprintf(log, "release: wrote the archives and images in %.1fs\n", time.Since(start).Seconds())
	if err := WriteChecksums(dir, names); err != nil {
		return Plan{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, NotesName), []byte(p.Notes), 0o644); err != nil {
		return Plan{}, err
	}
	for _, n := range append(names, ChecksumsName, NotesName) {
		fmt.Fprintf(log, "release: %s\n", filepath.Join(dir, n))
	}
	return p, nil
}

// writeArtifacts writes each target's archive and each linux target's image
// into dir and returns their names.
func writeArtifacts(root, dir, ca string, p Plan, bins map[Target]string) ([]string, error) {
	var names []string
	for _, t := range Targets {
		n := ArchiveName(p.Stamp.Version, t)
		if err := WriteArchive(filepath.Join(dir, n), bins[t], root, Docs, p.Time); err != nil {
			return nil, err
		}
		names = append(names, n)
		if t.OS != "linux" {
			continue
		}
		img, err := Image(bins[t], ca, t.Arch, p.Stamp, p.Time)
		if err != nil {
			return nil, err
		}
		n = ImageName(p.Stamp.Version, t)
		if err := WriteImage(filepath.Join(dir, n), img, p.Stamp.Version); err != nil {
			return nil, fmt.Errorf("image for linux/%s: %v", t.Arch, err)
		}
		names = append(names, n)
	}
	return names, nil
}

// emptyDir creates dir, or checks that it has nothing in it: a release
// directory holds one release, so checksums.txt covers exactly its files.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty (it has %s): a release goes into an empty or new directory", dir, ents[0].Name())
	}
	return nil
}
