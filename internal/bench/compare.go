package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RiverSettings are the settings bench/river runs River in: "tuned" as
// River's own benchmark configures its client, "default" with River's
// defaults and 100 workers.
var RiverSettings = []string{"tuned", "default"}

// RiverResult is the JSON line bench/river prints (bench/river/main.go's
// Result).
type RiverResult struct {
	Tool            string  `json:"tool"`
	RiverVersion    string  `json:"river_version"`
	Backend         string  `json:"backend"`
	Setting         string  `json:"setting"`
	Jobs            int     `json:"jobs"`
	Workers         int     `json:"workers"`
	FetchCooldownMS float64 `json:"fetch_cooldown_ms"`
	FetchPollMS     float64 `json:"fetch_poll_ms"`
	Synchronous     string  `json:"sqlite_synchronous,omitempty"`
	InsertS         float64 `json:"insert_s"`
	WallS           float64 `json:"wall_s"`
	JobsPerS        float64 `json:"jobs_per_s"`
}

// Backend is one store both sides run on: "sqlite" (a scratch file in a
// temp directory) or "postgres" with the DSN of a database (scratch schemas
// in it, dropped after).
type Backend struct {
	Name string `json:"name"`
	DSN  string `json:"-"`
}

// CompareOptions says what Compare runs.
type CompareOptions struct {
	Backends []Backend
	Jobs     int // jobs for River, cards for drover
	// Slots are drover's max_concurrent settings, each measured as a
	// figure of its own (e.g. 100 beside River's default 100 workers and
	// 2,000 beside its benchmark's 2,000).
	Slots  []int
	Rounds int
	// River is the bench/river binary (see BuildRiver).
	River string
	// Dir holds scratch directories ("" = the system's temp dir).
	Dir string
	// Progress, when set, gets a line per measurement as it finishes.
	Progress io.Writer
}

// Figure is one system in one setting on one backend over the rounds.
type Figure struct {
	Backend string `json:"backend"`
	System  string `json:"system"`  // river or drover
	Setting string `json:"setting"` // tuned, default, or drover's "slots=N"
	// Workers is River's worker count or drover's slots.
	Workers    int       `json:"workers"`
	PerS       []float64 `json:"per_s"` // jobs (cards) per second, one per round, in round order
	MedianPerS float64   `json:"median_per_s"`
	MinPerS    float64   `json:"min_per_s"`
	MaxPerS    float64   `json:"max_per_s"`
	// SpreadPct is (max-min)/median in percent.
	SpreadPct float64 `json:"spread_pct"`
}

// Ratio is drover's median over River's median on one backend, against one
// of River's settings (≥ 1: drover is ahead).
type Ratio struct {
	Backend string  `json:"backend"`
	Setting string  `json:"setting"` // drover's, "slots=N"
	Against string  `json:"against"`
	Drover  float64 `json:"drover_per_s"`
	River   float64 `json:"river_per_s"`
	Ratio   float64 `json:"ratio"`
}

// CompareStats is a whole compare run.
type CompareStats struct {
	Jobs         int      `json:"jobs"`
	Rounds       int      `json:"rounds"`
	Slots        []int    `json:"slots"`
	RiverVersion string   `json:"river_version"`
	Figures      []Figure `json:"figures"`
	Ratios       []Ratio  `json:"ratios"`
}

// Compare burns down o.Jobs no-op jobs with River (each setting) and o.Jobs
// sim cards with drover on each backend, o.Rounds times. Within a round the
// measurements are interleaved (backend by backend, the order of the
// systems rotated each round) so that a change in the machine's load weighs
// on every figure alike. Every figure comes from this run. River is a
// reference measurement, not a target: drover's jobs are agent runs of
// minutes, and what a no-op job costs is not what a run costs drover.
func Compare(ctx context.Context, o CompareOptions) (CompareStats, error) {
	cs := CompareStats{Jobs: o.Jobs, Rounds: o.Rounds, Slots: o.Slots}
	if o.Jobs <= 0 || len(o.Slots) == 0 || o.Rounds <= 0 || len(o.Backends) == 0 || o.River == "" {
		return cs, errors.New("bench: compare needs jobs, slots and rounds above 0, a backend and the River binary")
	}
	for _, n := range o.Slots {
		if n <= 0 {
			return cs, fmt.Errorf("bench: compare needs slots above 0 (got %d)", n)
		}
	}
	type key struct{ backend, system, setting string }
	figs := map[key]*Figure{}
	var order []key
	fig := func(k key, workers int) *Figure {
		if f, ok := figs[k]; ok {
			return f
		}
		f := &Figure{Backend: k.backend, System: k.system, Setting: k.setting, Workers: workers}
		figs[k] = f
		order = append(order, k)
		return f
	}
	droverSetting := func(n int) string { return fmt.Sprintf("slots=%d", n) }
	for round := range o.Rounds {
		for _, b := range o.Backends {
			// Each of drover's settings and River's two, rotated each round.
			var steps []string
			for _, n := range o.Slots {
				steps = append(steps, droverSetting(n))
			}
			steps = append(steps, RiverSettings...)
			steps = append(steps[round%len(steps):], steps[:round%len(steps)]...)
			for _, step := range steps {
				var perS float64
				var f *Figure
				store := ""
				if b.Name == "postgres" {
					store = b.DSN
				}
				if slots, ok := strings.CutPrefix(step, "slots="); ok {
					n, _ := strconv.Atoi(slots)
					st, err := MeasureDispatch(ctx, o.Dir, DispatchOptions{Store: store, Cards: o.Jobs, Slots: n})
					if err != nil {
						return cs, fmt.Errorf("drover %s on %s, round %d: %w", step, b.Name, round+1, err)
					}
					perS, f = st.CardsPerS, fig(key{b.Name, "drover", step}, n)
				} else {
					rr, err := RunRiver(ctx, o.River, b, step, o.Jobs, o.Dir)
					if err != nil {
						return cs, fmt.Errorf("river %s on %s, round %d: %w", step, b.Name, round+1, err)
					}
					cs.RiverVersion = rr.RiverVersion
					perS, f = rr.JobsPerS, fig(key{b.Name, "river", step}, rr.Workers)
				}
				f.PerS = append(f.PerS, perS)
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "round %d/%d  %-8s %-6s %-9s %10.0f /s\n", round+1, o.Rounds, b.Name, f.System, f.Setting, perS)
				}
			}
		}
	}
	for _, k := range order {
		f := figs[k]
		s := append([]float64(nil), f.PerS...)
		sort.Float64s(s)
		f.MinPerS, f.MaxPerS, f.MedianPerS = s[0], s[len(s)-1], median(s)
		if f.MedianPerS > 0 {
			f.SpreadPct = 100 * (f.MaxPerS - f.MinPerS) / f.MedianPerS
		}
		cs.Figures = append(cs.Figures, *f)
	}
	for _, b := range o.Backends {
		for _, n := range o.Slots {
			d := figs[key{b.Name, "drover", droverSetting(n)}]
			for _, s := range RiverSettings {
				r := figs[key{b.Name, "river", s}]
				ratio := 0.0
				if r.MedianPerS > 0 {
					ratio = d.MedianPerS / r.MedianPerS
				}
				cs.Ratios = append(cs.Ratios, Ratio{Backend: b.Name, Setting: d.Setting, Against: s, Drover: d.MedianPerS, River: r.MedianPerS, Ratio: ratio})
			}
		}
	}
	return cs, nil
}

// median of values (the mean of the middle two for an even count); v is
// left as it is.
func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RunRiver runs the bench/river binary once and reads its JSON line.
func RunRiver(ctx context.Context, bin string, b Backend, setting string, jobs int, dir string) (RiverResult, error) {
	args := []string{"--backend", b.Name, "--setting", setting, "--jobs", strconv.Itoa(jobs)}
	if b.Name == "postgres" {
		args = append(args, "--dsn", b.DSN)
	}
	if dir != "" {
		args = append(args, "--dir", dir)
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return RiverResult{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var rr RiverResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rr); err != nil {
		return rr, fmt.Errorf("%s printed %q, not its JSON line: %v", bin, out.String(), err)
	}
	if rr.Tool != "river" || rr.Jobs != jobs || rr.JobsPerS <= 0 {
		return rr, fmt.Errorf("%s printed %q: want tool river, %d jobs and a positive rate", bin, lines[len(lines)-1], jobs)
	}
	return rr, nil
}

// FindRiverModule finds bench/river (the directory with its go.mod) in the
// drover checkout that holds dir or one of its parents.
func FindRiverModule(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		m := filepath.Join(d, "bench", "river")
		if _, err := os.Stat(filepath.Join(m, "go.mod")); err == nil {
			return m, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no bench/river/go.mod in %s or its parents: run from a drover checkout, or pass --river-bin (build it with: cd bench/river && go build -o river-bench .)", dir)
		}
		d = parent
	}
}

// BuildRiver builds the bench/river module in moduleDir into outDir and
// returns the binary's path.
func BuildRiver(ctx context.Context, moduleDir, outDir string) (string, error) {
	bin := filepath.Join(outDir, "river-bench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", moduleDir, err, out)
	}
	return bin, nil
}
