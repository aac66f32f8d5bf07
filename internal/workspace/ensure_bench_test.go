package workspace

import (
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkEnsure makes a new workspace per op, and finds an existing one,
// by Ensure and by its full check alone (what every Ensure did before the
// plain-directory fast path), so the two compare in the same minute:
//
//	go test ./internal/workspace -run '^$' -bench Ensure -benchtime 2000x
func BenchmarkEnsure(b *testing.B) {
	for _, bc := range []struct {
		name   string
		ensure func(root, id string) (string, bool, error)
	}{
		{"fast", Ensure},
		{"checked", func(root, id string) (string, bool, error) {
			dir, err := Path(root, id)
			if err != nil {
				return "", false, err
			}
			return ensureChecked(root, dir)
		}},
	} {
		b.Run(bc.name+"/new", func(b *testing.B) {
			root := filepath.Join(b.TempDir(), "ws")
			for i := 0; i < b.N; i++ {
				if _, created, err := bc.ensure(root, "DRV-"+strconv.Itoa(i)); err != nil || !created {
					b.Fatal(created, err)
				}
			}
		})
		b.Run(bc.name+"/existing", func(b *testing.B) {
			root := filepath.Join(b.TempDir(), "ws")
			if _, _, err := bc.ensure(root, "DRV-1"); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				if _, created, err := bc.ensure(root, "DRV-1"); err != nil || created {
					b.Fatal(created, err)
				}
			}
		})
	}
}
