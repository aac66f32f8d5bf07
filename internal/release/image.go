package release

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image's layout: drover at BinaryPath, run as UID:GID (not root) in
// WorkDir, which that user owns (drover's stores and workspaces go there).
const (
	BinaryPath = "/usr/local/bin/drover"
	WorkDir    = "/work"
	UID        = 65532
	User       = "65532:65532"
)

// CABundles are where a CA bundle is read from for the image (the first that
// exists): drover reaches trackers over HTTPS, and the image has no base.
var CABundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}

// FindCABundle returns the first of CABundles that exists.
func FindCABundle() (string, error) {
	for _, p := range CABundles {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no CA bundle at %v for the container image: install the ca-certificates package", CABundles)
}

// ImageRef is the tag the image tarball carries: drover:<version>.
func ImageRef(version string) string { return "drover:" + version }

// entry is one file or directory of the image's only layer.
type entry struct {
	name string
	mode int64
	uid  int
	body []byte
	dir  bool
}

func layerEntries(bin, ca []byte) []entry {
	return []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, body: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\ndrover:x:%d:%d:drover:%s:/sbin/nologin\n", UID, UID, WorkDir))},
		{name: "etc/group", mode: 0o644, body: []byte(fmt.Sprintf("root:x:0:\ndrover:x:%d:\n", UID))},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: ca},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: BinaryPath[1:], mode: 0o755, body: bin},
		{name: WorkDir[1:] + "/", mode: 0o755, uid: UID, dir: true},
	}
}

func layerTar(entries []entry, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Uid: e.uid, Gid: e.uid, ModTime: at}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Image is the container image of one linux binary: no base, one layer,
// entrypoint drover.
func Image(binPath, caPath string, arch string, st Stamp, at time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	raw, err := layerTar(layerEntries(bin, ca), at)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: at}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, History: v1.History{Created: created, CreatedBy: ".ci/release", Comment: "drover " + st.Version}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", arch, created
	cfg.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		User:       User,
		WorkingDir: WorkDir,
		Env:        []string{"PATH=/usr/local/bin", "HOME=" + WorkDir},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "drover",
			"org.opencontainers.image.version":  st.Version,
			"org.opencontainers.image.revision": st.Commit,
			"org.opencontainers.image.created":  st.Date,
			"org.opencontainers.image.source":   "https://github.com/drover-dev/drover",
		},
	}
	return mutate.ConfigFile(img, cfg)
}

// WriteImage writes img to path as an image tarball tagged ImageRef(version):
// the format docker save writes, which docker load and podman load read.
func WriteImage(path string, img v1.Image, version string) error {
	tag, err := name.NewTag(ImageRef(version))
	if err != nil {
		return err
	}
	return tarball.WriteToFile(path, tag, img)
}
