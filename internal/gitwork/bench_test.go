package gitwork

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkWorktreeVsClone makes a card's workspace on a repository of
// 3,000 files both ways, side by side: a worktree from the shared mirror
// (what drover does) and a git clone of the remote through git's transport
// (file://, as a clone over the network packs; what a hook would do).
//
//	go test ./internal/gitwork -run '^$' -bench WorktreeVsClone -benchtime 10x
func BenchmarkWorktreeVsClone(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 3000; i++ {
		files[fmt.Sprintf("pkg%02d/file%04d.go", i%50, i)] = fmt.Sprintf("package pkg%02d\n\n// %d\nvar V%d = %d\n", i%50, i, i, i)
	}
	remote := newRemote(b, files)
	ctx := context.Background()
	b.Run("worktree", func(b *testing.B) {
		m := open(b, remote, b.TempDir())
		root := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := m.Worktree(ctx, filepath.Join(root, strconv.Itoa(i)), "drover/b-"+strconv.Itoa(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clone", func(b *testing.B) {
		root := b.TempDir()
		r := runner{env: gitEnv(os.Environ(), remote, "")}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			dir := filepath.Join(root, strconv.Itoa(i))
			if _, err := r.git(ctx, "", "clone", "--quiet", "file://"+remote, dir); err != nil {
				b.Fatal(err)
			}
			if _, err := r.git(ctx, dir, "checkout", "--quiet", "-b", "drover/b-"+strconv.Itoa(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
