// Command river burns down N no-op jobs with River (github.com/riverqueue/river)
// on SQLite (the pure-Go modernc driver) or PostgreSQL (pgx v5) and prints one
// JSON line of what it measured. `drover bench compare` runs it beside drover's
// own dispatch benchmark, interleaved, so that their ratio is measured in one
// run on one machine.
//
// It is a module of its own (bench/river/go.mod) so that River never becomes a
// dependency of the drover binary: the root module's `go test ./...` and `go mod
// tidy` do not see this directory.
//
// The two settings:
//
//   - tuned: as River's own benchmark (cmd/river/riverbench) configures its
//     client: FetchCooldown 2 ms, FetchPollInterval 20 ms, 2,000 workers on the
//     default queue; all jobs inserted before the client starts; the clock runs
//     from Client.Start to the last job's completion event.
//   - default: River's defaults (FetchCooldown 100 ms, FetchPollInterval 1 s)
//     with 100 workers, measured the same way.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

// Result is the one JSON line the command prints. drover bench compare reads
// it (internal/bench.RiverResult has the same fields).
type Result struct {
	Tool            string  `json:"tool"`
	RiverVersion    string  `json:"river_version"`
	Backend         string  `json:"backend"`
	Setting         string  `json:"setting"`
	Jobs            int     `json:"jobs"`
	Workers         int     `json:"workers"`
	FetchCooldownMS float64 `json:"fetch_cooldown_ms"`
	FetchPollMS     float64 `json:"fetch_poll_ms"`
	// SQLite only: the pragmas the River pool ran with.
	Synchronous string  `json:"sqlite_synchronous,omitempty"`
	InsertS     float64 `json:"insert_s"`
	WallS       float64 `json:"wall_s"`
	JobsPerS    float64 `json:"jobs_per_s"`
}

// riverVersion is the River release go.mod pins; a test checks they agree.
const riverVersion = "v0.51.2"

// setting is one client configuration.
type setting struct {
	workers         int
	cooldown, poll  time.Duration
	defaultCooldown bool // leave FetchCooldown and FetchPollInterval unset
}

var settings = map[string]setting{
	"tuned":   {workers: 2000, cooldown: 2 * time.Millisecond, poll: 20 * time.Millisecond},
	"default": {workers: 100, cooldown: 100 * time.Millisecond, poll: time.Second, defaultCooldown: true},
}

func main() {
	var o options
	flag.StringVar(&o.backend, "backend", "sqlite", "sqlite or postgres")
	flag.StringVar(&o.dsn, "dsn", "", "postgres: the database URL (a scratch schema is created in it and dropped after); sqlite: unused")
	flag.StringVar(&o.dir, "dir", "", "sqlite: directory for the scratch database (default: the system's temp dir)")
	flag.StringVar(&o.setting, "setting", "tuned", "tuned (River's benchmark settings) or default (River's defaults, 100 workers)")
	flag.IntVar(&o.jobs, "jobs", 10000, "no-op jobs to burn down")
	flag.StringVar(&o.synchronous, "sqlite-synchronous", "NORMAL", "sqlite: PRAGMA synchronous of River's pool (NORMAL is drover's store's; River's own CLI leaves SQLite's default, FULL)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	res, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(1)
	}
}

type options struct {
	backend, dsn, dir, setting, synchronous string
	jobs                                    int
	timeout                                 time.Duration
}

func (o options) check() error {
	if o.backend != "sqlite" && o.backend != "postgres" {
		return fmt.Errorf("--backend %q: want sqlite or postgres", o.backend)
	}
	if o.backend == "postgres" && o.dsn == "" {
		return fmt.Errorf("--dsn is required with --backend postgres (e.g. postgres://postgres@127.0.0.1:5432/test)")
	}
	if _, ok := settings[o.setting]; !ok {
		return fmt.Errorf("--setting %q: want tuned or default", o.setting)
	}
	if o.jobs <= 0 {
		return fmt.Errorf("--jobs must be positive (got %d)", o.jobs)
	}
	switch o.synchronous {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return fmt.Errorf("--sqlite-synchronous %q: want OFF, NORMAL, FULL or EXTRA", o.synchronous)
	}
	return nil
}
