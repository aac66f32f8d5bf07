package release

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Each linux image tarball, read back as docker load reads it, is tagged
// drover:<version>, runs drover as its entrypoint as a non-root user in a
// workdir that user can write, and its layer's drover is the archive's: a
// static binary for that architecture.
func TestImages(t *testing.T) {
	dir := releaseDir(t)
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			archives, _ := filepath.Glob(filepath.Join(dir, "drover_*_linux_"+arch+".tar.gz"))
			if len(archives) != 1 {
				t.Fatalf("%d linux/%s archives, want 1", len(archives), arch)
			}
			version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(archives[0]), "drover_"), "_linux_"+arch+".tar.gz")
			bin := filepath.Join(extractArchive(t, archives[0]), "drover")
			assertStatic(t, bin, arch)
			want := sha256File(t, bin)

			file := filepath.Join(dir, "drover_"+version+"_linux_"+arch+".image.tar")
			m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return openFile(file) })
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != 1 || !reflect.DeepEqual(m[0].RepoTags, []string{"drover:" + version}) {
				t.Fatalf("manifest.json = %+v, want one image tagged drover:%s", m, version)
			}
			tag, _ := name.NewTag("drover:" + version)
			img, err := tarball.ImageFromPath(file, &tag)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			c := cfg.Config
			if cfg.OS != "linux" || cfg.Architecture != arch {
				t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, arch)
			}
			if len(c.Entrypoint) != 1 {
				t.Fatalf("entrypoint %q, want the drover binary", c.Entrypoint)
			}
			uid, err := strconv.Atoi(strings.SplitN(c.User, ":", 2)[0])
			if err != nil || uid == 0 {
				t.Errorf("user %q, want a numeric non-root uid", c.User)
			}
			if c.WorkingDir == "" {
				t.Error("no workdir")
			}
			layers, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]*tar.Header{}
			sums := map[string]string{}
			for _, l := range layers {
				readLayer(t, l.Uncompressed, files, sums)
			}
			entry := strings.TrimPrefix(c.Entrypoint[0], "/")
			if h := files[entry]; h == nil || h.Mode&0o111 == 0 {
				t.Errorf("the entrypoint %s is not an executable in the layers", c.Entrypoint[0])
			} else if sums[entry] != want {
				t.Errorf("the image's %s is not the archive's drover", c.Entrypoint[0])
			}
			wd := strings.TrimPrefix(path.Clean(c.WorkingDir), "/") + "/"
			if h := files[wd]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != uid || h.Mode&0o200 == 0 {
				t.Errorf("workdir %s is not a directory uid %d can write: %+v", c.WorkingDir, uid, h)
			}
		})
	}
}

func readLayer(t *testing.T, open func() (io.ReadCloser, error), files map[string]*tar.Header, sums map[string]string) {
	t.Helper()
	rc, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		if h.Typeflag == tar.TypeReg {
			s := sha256.New()
			if _, err := io.Copy(s, tr); err != nil {
				t.Fatal(err)
			}
			sums[h.Name] = hex.EncodeToString(s.Sum(nil))
		}
	}
}
