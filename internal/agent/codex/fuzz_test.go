package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCodexParser: any stdout/stderr is parsed without panicking. Seeds are
// the captured fixtures.
func FuzzCodexParser(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/*")
	for _, d := range dirs {
		out, err1 := os.ReadFile(filepath.Join(d, "stdout"))
		errb, err2 := os.ReadFile(filepath.Join(d, "stderr"))
		if err1 != nil || err2 != nil {
			continue // README.md
		}
		f.Add(out, errb)
	}
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		p := NewParser()
		for _, l := range bytes.Split(stdout, []byte("\n")) {
			p.Feed(l)
		}
		for _, l := range bytes.Split(stderr, []byte("\n")) {
			p.FeedStderr(l)
		}
		_ = p.Structured()
		_, _, _, _ = p.Progress()
	})
}
