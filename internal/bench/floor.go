package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// FloorStats are the same K scripts started at once by this process
// itself (a goroutine each, exec.Cmd, no store, no supervisor): what the
// machine charges for K processes that stamp, sleep and stamp, the
// reference the starts' latencies are read against.
type FloorStats struct {
	Runs int `json:"runs"`
	// exec: exec.Cmd.Start returned (the child's execve succeeded); script:
	// the script's first command, as in StartStats.
	StartToExecP50MS   float64 `json:"start_to_exec_p50_ms"`
	StartToExecP99MS   float64 `json:"start_to_exec_p99_ms"`
	StartToScriptP50MS float64 `json:"start_to_script_p50_ms"`
	StartToScriptP99MS float64 `json:"start_to_script_p99_ms"`
	ExitToReapedP50MS  float64 `json:"exit_to_reaped_p50_ms"`
	ExitToReapedP99MS  float64 `json:"exit_to_reaped_p99_ms"`
	// ExecP99OverFloor is the starts' eligible → exec p99 over this
	// start → exec p99: what drover adds, as a ratio from the same run.
	ExecP99OverFloor float64 `json:"exec_p99_over_floor"`
}

// measureFloor starts k copies of the stamp script at once and times them
// from one instant (when the goroutines are let go) to each one's Start
// returning and to each script's start stamp, and from its end stamp to its
// Wait's return.
func measureFloor(ctx context.Context, dir string, k int) (FloorStats, error) {
	fs := FloorStats{Runs: k}
	scratch, cleanup, err := tempDir(dir)
	if err != nil {
		return fs, err
	}
	defer cleanup()
	script := fmt.Sprintf(`date +%%s%%N > %s/$ID.start; sleep 1; date +%%s%%N > %s/$ID.end`, scratch, scratch)
	go0 := make(chan struct{})
	execed, reaped := make([]time.Time, k), make([]time.Time, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
			cmd.Env = append(os.Environ(), "ID="+strconv.Itoa(i))
			<-go0
			if errs[i] = cmd.Start(); errs[i] != nil {
				return
			}
			execed[i] = time.Now()
			errs[i] = cmd.Wait()
			reaped[i] = time.Now()
		}()
	}
	t0 := time.Now()
	close(go0)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fs, fmt.Errorf("bench: the floor's scripts: %w", err)
	}
	var toExec, toScript, toReaped []time.Duration
	for i := range k {
		start, err1 := readStamp(filepath.Join(scratch, strconv.Itoa(i)+".start"))
		end, err2 := readStamp(filepath.Join(scratch, strconv.Itoa(i)+".end"))
		if err := errors.Join(err1, err2); err != nil {
			return fs, err
		}
		toExec = append(toExec, execed[i].Sub(t0))
		toScript = append(toScript, start.Sub(t0))
		toReaped = append(toReaped, reaped[i].Sub(end))
	}
	fs.StartToExecP50MS, fs.StartToExecP99MS = p50p99(toExec)
	fs.StartToScriptP50MS, fs.StartToScriptP99MS = p50p99(toScript)
	fs.ExitToReapedP50MS, fs.ExitToReapedP99MS = p50p99(toReaped)
	return fs, nil
}
