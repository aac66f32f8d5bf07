package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzClaudeParser: any line sequence is parsed without panicking. Seeds
// are every line of every captured fixture.
func FuzzClaudeParser(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/*/stdout")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := NewParser()
		for _, l := range bytes.Split(data, []byte("\n")) {
			p.Feed(l)
		}
		p.Feed(data)
		_ = p.Structured()
		_, _, _, _ = p.Progress()
	})
}
