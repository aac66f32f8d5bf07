package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// FileCost is what the file system under the scratch directory (where the
// benchmarks' workspaces and logs go) took for the files every card's run
// makes: its workspace and log directories (a mkdir each) and its log file
// (a create), in wall time.
type FileCost struct {
	MkdirUS  float64 `json:"mkdir_us"`  // mean (Compare: median of the rounds' means)
	CreateUS float64 `json:"create_us"` // create and close
	// PerCardUS is a card's two mkdirs and one create.
	PerCardUS float64 `json:"per_card_us"`
	// MkdirPerS is the rate of mkdirs in one directory (1s / MkdirUS).
	MkdirPerS float64 `json:"mkdir_per_s"`
}

func fileCost(mkdirUS, createUS float64) FileCost {
	fc := FileCost{MkdirUS: mkdirUS, CreateUS: createUS, PerCardUS: 2*mkdirUS + createUS}
	if mkdirUS > 0 {
		fc.MkdirPerS = 1e6 / mkdirUS
	}
	return fc
}

// fileOps is how many directories (and files) a measurement makes.
const fileOps = 500

// MeasureFiles times fileOps mkdirs and fileOps creates, one after the
// other, in a new directory under dir ("" = the system's temp dir), and
// returns their means (Compare takes one a round and their medians).
// Every card's workspace is a directory made in the one workspace root, so
// the mkdir rate is an estimate of what a dispatcher that gives each card
// its own can reach on this file system: the directory takes one creation
// at a time (on the development machine's ext4, two or four goroutines made
// fewer per second than one), though a fresh directory of fileOps entries
// is not a root of thousands.
func MeasureFiles(dir string) (FileCost, error) {
	d, cleanup, err := tempDir(dir)
	if err != nil {
		return FileCost{}, err
	}
	defer cleanup()
	dirs, files := make([]string, fileOps), make([]string, fileOps)
	for i := range fileOps {
		dirs[i], files[i] = filepath.Join(d, fmt.Sprint("w", i)), filepath.Join(d, fmt.Sprint("f", i, ".log"))
	}
	start := time.Now()
	for _, p := range dirs {
		if err := os.Mkdir(p, 0o755); err != nil {
			return FileCost{}, err
		}
	}
	mk := float64(time.Since(start).Microseconds()) / fileOps
	start = time.Now()
	for _, p := range files {
		f, err := os.Create(p)
		if err != nil {
			return FileCost{}, err
		}
		f.Close()
	}
	return fileCost(mk, float64(time.Since(start).Microseconds())/fileOps), nil
}
