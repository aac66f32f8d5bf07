package release

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var testTime = time.Date(2026, 12, 2, 7, 46, 54, 0, time.UTC)

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type tarEntry struct {
	Mode     int64
	Uid, Gid int
	Body     string
}

func readTar(t *testing.T, r io.Reader) (map[string]tarEntry, []string) {
	t.Helper()
	got := map[string]tarEntry{}
	var order []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got, order
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(testTime) {
			t.Errorf("%s is dated %s, want the commit's time", h.Name, h.ModTime)
		}
		b, _ := io.ReadAll(tr)
		got[h.Name] = tarEntry{h.Mode, h.Uid, h.Gid, string(b)}
		order = append(order, h.Name)
	}
}

// An archive holds drover (executable) and the docs that exist, at its root.
func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, filepath.Join(dir, "bin"), "#!binary")
	writeFile(t, filepath.Join(dir, "README.md"), "readme")
	writeFile(t, filepath.Join(dir, "CHANGELOG.md"), "changes")
	out := filepath.Join(dir, "a.tar.gz")
	if err := WriteArchive(out, bin, dir, Docs, testTime); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, order := readTar(t, gz)
	want := map[string]tarEntry{"drover": {0o755, 0, 0, "#!binary"}, "README.md": {0o644, 0, 0, "readme"}, "CHANGELOG.md": {0o644, 0, 0, "changes"}}
	if !reflect.DeepEqual(got, want) || order[0] != "drover" {
		t.Fatalf("archive = %v (order %v), want %v", got, order, want)
	}
}

// checksums.txt is what sha256sum -c reads.
func TestWriteChecksums(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.tar.gz"), "b")
	writeFile(t, filepath.Join(dir, "a.tar.gz"), "a")
	if err := WriteChecksums(dir, []string{"b.tar.gz", "a.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ChecksumsName))
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.tar.gz\n"
	if string(b) != want {
		t.Fatalf("checksums.txt =\n%s\nwant\n%s", b, want)
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		return
	}
	cmd := exec.Command("sha256sum", "-c", ChecksumsName)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
}

// The image: no base, one layer with drover, a non-root user owning the
// workdir, the CA bundle; entrypoint drover; tagged drover:<version>.
func TestImageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, filepath.Join(dir, "bin"), "#!binary")
	ca := writeFile(t, filepath.Join(dir, "ca.crt"), "certs")
	st := Stamp{Version: "0.1.1-SNAPSHOT-6d71f6c", Commit: "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091", Date: "2026-12-02T07:46:54Z"}
	img, err := Image(bin, ca, "arm64", st, testTime)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	if err := WriteImage(out, img, st.Version); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(ImageRef(st.Version))
	back, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if cfg.OS != "linux" || cfg.Architecture != "arm64" || !cfg.Created.Time.Equal(testTime) ||
		!reflect.DeepEqual(c.Entrypoint, []string{"/usr/local/bin/drover"}) || c.User != "65532:65532" || c.WorkingDir != "/work" ||
		c.Labels["org.opencontainers.image.version"] != st.Version || c.Labels["org.opencontainers.image.revision"] != st.Commit {
		t.Fatalf("config = %+v", cfg)
	}
	layers, err := back.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, _ := readTar(t, rc)
	for path, want := range map[string]tarEntry{
		"usr/local/bin/drover":              {0o755, 0, 0, "#!binary"},
		"work/":                             {0o755, 65532, 65532, ""},
		"tmp/":                              {0o1777, 0, 0, ""},
		"etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0, "certs"},
	} {
		if got[path] != want {
			t.Errorf("layer %s = %+v, want %+v", path, got[path], want)
		}
	}
	if !strings.Contains(got["etc/passwd"].Body, "drover:x:65532:65532:drover:/work:") {
		t.Errorf("etc/passwd = %q", got["etc/passwd"].Body)
	}
}
