package opencode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpencodeParser: any line sequence is parsed
// without panicking. Seeds are every line of every captured fixture (and
// the committed corpus under testdata/fuzz).
func FuzzOpencodeParser(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/std*")
	for _, name := range files {
		b, err := os.ReadFile(name)
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
