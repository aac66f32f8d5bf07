//go:build linux

package release

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The host architecture's image, unpacked and run as a container runtime
// would (no docker here): chrooted into its files alone, as its user, in its
// workdir, with its environment, drover init writes a board into the workdir
// and drover demo --until-settled settles.
func TestImageRunsAsItsUser(t *testing.T) {
	dir := releaseDir(t)
	if os.Geteuid() != 0 {
		t.Skip("unpacking the image with its owners and chrooting into it needs root")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "drover_*_linux_"+runtime.GOARCH+".image.tar"))
	if len(files) != 1 {
		t.Fatalf("%d linux/%s images, want 1", len(files), runtime.GOARCH)
	}
	img, err := tarball.ImageFromPath(files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	unpack(t, img, root)
	c := cfg.Config
	parts := strings.SplitN(c.User, ":", 2)
	uid, _ := strconv.Atoi(parts[0])
	gid := uid
	if len(parts) == 2 {
		gid, _ = strconv.Atoi(parts[1])
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(c.Entrypoint[0], args...)
		cmd.Env = c.Env
		cmd.Dir = c.WorkingDir
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in the image: drover %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("init")
	if _, err := os.Stat(filepath.Join(root, c.WorkingDir, "WORKFLOW.md")); err != nil {
		t.Errorf("drover init wrote no WORKFLOW.md into the workdir %s: %v", c.WorkingDir, err)
	}
	if out := run("demo", "--until-settled"); !strings.Contains(out, "DRV-1") || !strings.Contains(out, "review") {
		t.Errorf("the demo in the image did not settle:\n%s", out)
	}
}

// unpack writes img's layers into root with their modes and owners.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, filepath.FromSlash(h.Name))
			if !strings.HasPrefix(p, root+string(filepath.Separator)) {
				t.Fatalf("layer entry %q leaves the root", h.Name)
			}
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(p, 0o755)
			case tar.TypeReg:
				err = writeEntry(p, tr)
			default:
				t.Fatalf("layer entry %q has type %c, want a file or directory", h.Name, h.Typeflag)
			}
			if err == nil {
				err = os.Chown(p, h.Uid, h.Gid)
			}
			if err == nil {
				err = os.Chmod(p, os.FileMode(h.Mode).Perm()|modeBits(h.Mode))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rc.Close()
	}
}

func writeEntry(p string, r io.Reader) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// modeBits carries a tar mode's sticky bit (the image's /tmp) to os.FileMode.
func modeBits(mode int64) os.FileMode {
	if mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}
