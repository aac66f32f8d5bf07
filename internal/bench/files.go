package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	CPUs      int     `json:"cpus"`
}

// fileOps is how many directories (and files) a measurement makes.
const fileOps = 200

// MeasureFiles times fileOps mkdirs and fileOps creates in a new directory
// under dir ("" = the system's temp dir), rounds times, and returns the
// medians of the rounds' means.
func MeasureFiles(dir string, rounds int) (FileCost, error) {
	fc := FileCost{CPUs: runtime.NumCPU()}
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
	fc.MkdirUS, fc.CreateUS = median(mk), median(cr)
	fc.PerCardUS = 2*fc.MkdirUS + fc.CreateUS
	return fc, nil
}
