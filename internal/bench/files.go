package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// FileCost is what the file system under the scratch directory (where the
// benchmarks' workspaces and logs go) takes for the files every card's run
// makes: its workspace and log directories (a mkdir each) and its log file
// (a create), and the CPU River's tuned rate leaves per job on this machine.
type FileCost struct {
	MkdirUS  float64 `json:"mkdir_us"`  // median of the rounds' means
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
// other, in a new directory under dir ("" = the system's temp dir), rounds
// times, and returns the medians of the rounds' means. (One after the other
// is the best case: a directory takes one creation at a time, and on the
// development machine's ext4 two or four goroutines made fewer per second
// than one.)
func MeasureFiles(dir string, rounds int) (FileCost, error) {
	var fc FileCost
	var mk, cr []float64
	for range max(rounds, 1) {
		d, cleanup, err := tempDir(dir)
		if err != nil {
			return fc, err
		}
		start := time.Now()
		for i := range fileOps {
			if err := os.Mkdir(filepath.Join(d, fmt.Sprint("w", i)), 0o755); err != nil {
				cleanup()
				return fc, err
			}
		}
		mk = append(mk, float64(time.Since(start).Microseconds())/fileOps)
		start = time.Now()
		for i := range fileOps {
			f, err := os.Create(filepath.Join(d, fmt.Sprint("f", i, ".log")))
			if err != nil {
				cleanup()
				return fc, err
			}
			f.Close()
		}
		cr = append(cr, float64(time.Since(start).Microseconds())/fileOps)
		cleanup()
	}
	sort.Float64s(mk)
	sort.Float64s(cr)
	return fileCost(median(mk), median(cr)), nil
}
