package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Docs are the files from the module's root an archive carries beside the
// binary, those that exist.
var Docs = []string{"README.md", "CHANGELOG.md", "LICENSE"}

// WriteArchive writes a .tar.gz at path holding the binary bin as "drover"
// (mode 0755) and each of docs (paths under root) by its base name (0644),
// all owned by 0:0 and dated at: the same inputs give the same bytes.
func WriteArchive(path, bin, root string, docs []string, at time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz, err := gzip.NewWriterLevel(f, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	if err := addFile(tw, "drover", bin, 0o755, at); err != nil {
		return err
	}
	for _, d := range docs {
		err := addFile(tw, filepath.Base(d), filepath.Join(root, d), 0o644, at)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addFile(tw *tar.Writer, name, src string, mode int64, at time.Time) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(b)), ModTime: at, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = tw.Write(b)
	return err
}

// FileSHA256 is the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ChecksumsName is the checksum file of a release directory.
const ChecksumsName = "checksums.txt"

// WriteChecksums writes dir/checksums.txt for names (files in dir), sorted,
// one "<sha256>  <name>" line each: the format sha256sum -c reads.
func WriteChecksums(dir string, names []string) error {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := FileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, ChecksumsName), []byte(b.String()), 0o644)
}
