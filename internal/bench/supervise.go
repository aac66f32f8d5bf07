package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// linesProfile is a command-kind agent that prints a line a second until it
// is stopped.
const linesProfile = `    lines: {kind: command, command: /bin/sh, args: ["-c", "i=0; while :; do i=$$((i+1)); echo \"line $$i\"; sleep 1; done"], prompt: stdin, stall_timeout: 1h, timeout: 2h}`

// SuperviseStats is the cost of supervising many agents at once.
type SuperviseStats struct {
	Backend string  `json:"backend"`
	Agents  int     `json:"agents"`
	WindowS float64 `json:"window_s"`
	// RampS is the time from the dispatcher's start until every agent ran;
	// StartCPUMSPerAgent is the drover process's CPU over the ramp per agent.
	RampS              float64 `json:"ramp_s"`
	StartCPUMSPerAgent float64 `json:"start_cpu_ms_per_agent"`
	// CPUShare is the drover process's CPU time over the window divided by
	// the window: 0.1 is 10% of one core.
	CPUShare float64 `json:"cpu_share"`
	// RSSMB is the drover process's resident memory at the window's end,
	// MaxRSSMB the most it had at a sample (one a second).
	RSSMB    float64 `json:"rss_mb"`
	MaxRSSMB float64 `json:"max_rss_mb"`
	// Supervisors are drover's supervisor processes (drover re-executed,
	// when it runs them: the drover binary does, a test binary does not):
	// one node supervisor for every run of the process (a drover before it
	// had one per run). How many, their CPU share together and their
	// proportional memory (PSS, so the pages they share are counted once)
	// together.
	Supervisors        int     `json:"supervisors"`
	SupervisorCPUShare float64 `json:"supervisor_cpu_share"`
	SupervisorPSSMB    float64 `json:"supervisor_pss_mb"`
	// SupervisorRSSMB is the supervisors' resident memory (VmRSS) at the
	// window's end, together.
	SupervisorRSSMB float64 `json:"supervisor_rss_mb"`
	// TotalCPUShare and TotalRSSMB are drover's and its supervisors'
	// together (RSS: VmRSS of each, the agents not counted);
	// RSSPerAgentKB is TotalRSSMB over the agents.
	TotalCPUShare float64 `json:"total_cpu_share"`
	TotalRSSMB    float64 `json:"total_rss_mb"`
	RSSPerAgentKB float64 `json:"rss_per_agent_kb"`
}

// MeasureSupervise runs agents command-kind agents at once (each a shell
// loop printing a line a second) under one dispatcher on a scratch store,
// waits until all run, then samples the drover process's CPU and memory
// over window.
func MeasureSupervise(ctx context.Context, dir, storeDSN string, agents int, window time.Duration) (SuperviseStats, error) {
	return measureSupervise(ctx, dir, storeDSN, agents, window, func(string) {}, nil)
}

// measureSupervise is MeasureSupervise saying what it does through
// progress (a line at a time, no newline); onWindow, when set, is called
// as the window starts and what it returns as it ends (a CPU profile of
// the window alone).
func measureSupervise(ctx context.Context, dir, storeDSN string, agents int, window time.Duration, progress func(string), onWindow func() func()) (SuperviseStats, error) {
	ss := SuperviseStats{Agents: agents, WindowS: window.Seconds()}
	if agents <= 0 || window <= 0 {
		return ss, fmt.Errorf("bench: agents and window must be positive (got %d and %s)", agents, window)
	}
	scratch, dsn, cleanup, err := scratchStore(ctx, dir, storeDSN)
	if err != nil {
		return ss, err
	}
	defer cleanup()
	r, err := startRigProfiles(ctx, dsn, scratch, "bench", time.Second, agents, linesProfile, &observed{})
	if err != nil {
		return ss, err
	}
	defer r.close()
	ss.Backend = r.st.Backend()
	progress(fmt.Sprintf("supervise: creating %d cards on %s", agents, ss.Backend))
	if err := createMany(ctx, r.st, agents, func(i int) board.Card {
		return board.Card{Title: fmt.Sprint("agent ", i), State: "ready", Agent: "lines"}
	}); err != nil {
		return ss, err
	}
	cpu0 := selfCPU()
	start := time.Now()
	limit := time.Duration(agents)*200*time.Millisecond + time.Minute
	if err := r.run(ctx, limit); err != nil {
		return ss, err
	}
	lastSaid := time.Now()
	for r.d.Running() < agents {
		if time.Since(start) > limit {
			return ss, fmt.Errorf("bench: %d of %d agents running after %s", r.d.Running(), agents, limit)
		}
		if time.Since(lastSaid) >= 5*time.Second {
			progress(fmt.Sprintf("supervise: %d of %d agents running after %.0fs", r.d.Running(), agents, time.Since(start).Seconds()))
			lastSaid = time.Now()
		}
		select {
		case <-ctx.Done():
			return ss, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	ss.RampS = time.Since(start).Seconds()
	ss.StartCPUMSPerAgent = msOf(selfCPU()-cpu0) / float64(agents)
	progress(fmt.Sprintf("supervise: all %d agents running after %.1fs; sampling for %s", agents, ss.RampS, window))

	if onWindow != nil {
		defer onWindow()()
	}
	sup0 := supervisors()
	cpu1, t1 := selfCPU(), time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.After(window)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return ss, ctx.Err()
		case now := <-tick.C:
			ss.MaxRSSMB = max(ss.MaxRSSMB, selfRSSMB())
			if s := now.Sub(t1); s >= 10*time.Second && int(s.Seconds())%10 == 0 {
				progress(fmt.Sprintf("supervise: %.0fs of %s, %d agents running, drover %.1f%% of a core so far",
					s.Seconds(), window, r.d.Running(), 100*(selfCPU()-cpu1).Seconds()/s.Seconds()))
			}
		case <-end:
			done = true
		}
	}
	elapsed := time.Since(t1)
	ss.CPUShare = (selfCPU() - cpu1).Seconds() / elapsed.Seconds()
	ss.RSSMB = selfRSSMB()
	ss.MaxRSSMB = max(ss.MaxRSSMB, ss.RSSMB)
	sup1 := supervisors()
	for _, p := range sup1 {
		ss.SupervisorPSSMB += p.pssMB
		ss.SupervisorRSSMB += p.rssMB
	}
	ss.Supervisors = len(sup1)
	ss.SupervisorCPUShare = supCPUDelta(sup0, sup1).Seconds() / elapsed.Seconds()
	ss.TotalCPUShare = ss.CPUShare + ss.SupervisorCPUShare
	ss.TotalRSSMB = ss.RSSMB + ss.SupervisorRSSMB
	ss.RSSPerAgentKB = 1024 * ss.TotalRSSMB / float64(agents)
	if n := r.d.Running(); n < agents {
		return ss, fmt.Errorf("bench: only %d of %d agents still ran at the window's end%s", n, agents, whyEnded(ctx, r.st))
	}
	return ss, nil
}

// lastLogOf is the end of the log of the card's first run.
func lastLogOf(ctx context.Context, st store.Store, cardID string) string {
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: cardID})
	if err != nil || len(runs) == 0 || runs[0].LogPath == "" {
		return ""
	}
	b, err := os.ReadFile(runs[0].LogPath)
	if err != nil {
		return ""
	}
	b = b[max(0, len(b)-400):]
	return "; its log ends: " + strings.ReplaceAll(string(b), "\n", " | ")
}

// whyEnded says where the cards whose agents no longer run went, and why
// (the first reason of each state).
func whyEnded(ctx context.Context, st store.Store) string {
	cards, err := st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		return ""
	}
	n, why := map[string]int{}, map[string]string{}
	var states []string
	for _, c := range cards {
		if c.State == "in_progress" {
			continue
		}
		if n[c.State] == 0 {
			states = append(states, c.State)
			why[c.State] = c.StateReason + lastLogOf(ctx, st, c.ID)
		}
		n[c.State]++
	}
	var b strings.Builder
	for _, s := range states {
		fmt.Fprintf(&b, "; %d %s (%.800s)", n[s], s, why[s])
	}
	return b.String()
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfRSSMB is this process's resident set (VmRSS) in MiB.
func selfRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return kbField(b, "VmRSS:") / 1024
}

// kbField reads a "Name:   123 kB" line.
func kbField(b []byte, name string) float64 {
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseFloat(f[0], 64)
				return v
			}
		}
	}
	return 0
}

type procSample struct {
	cpu   time.Duration
	pssMB float64
	rssMB float64
}

// supCPUDelta is the supervisors' CPU between two samples: a supervisor
// that started in between counts from its start, one that ended does not
// count (drover starts one and keeps it).
func supCPUDelta(before, after map[string]procSample) time.Duration {
	var d time.Duration
	for pid, p := range after {
		d += p.cpu - before[pid].cpu
	}
	return d
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// childDirs are the /proc directories of this process's children, from
// each thread's children file: a listing of /proc can miss entries while
// thousands of processes come and go (agents forking a sleep a second),
// and did miss the supervisor. Without those files (a kernel built
// without them), every process's directory.
func childDirs() []string {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var dirs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, pid := range strings.Fields(string(b)) {
			dirs = append(dirs, "/proc/"+pid)
		}
	}
	if len(files) == 0 {
		dirs, _ = filepath.Glob("/proc/[0-9]*")
	}
	return dirs
}

// supervisors finds this process's children that run this process's own
// executable (the node supervisor; the agents are its children, not
// drover's) and reads their CPU time and PSS.
func supervisors() map[string]procSample {
	out := map[string]procSample{}
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return out
	}
	me := strconv.Itoa(os.Getpid())
	for _, d := range childDirs() {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 13 || f[1] != me {
			continue
		}
		if exe, err := os.Readlink(filepath.Join(d, "exe")); err != nil || exe != self {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		s := procSample{cpu: time.Duration(ut+st) * clockTick}
		if b, err := os.ReadFile(filepath.Join(d, "smaps_rollup")); err == nil {
			s.pssMB = kbField(b, "Pss:") / 1024
		}
		if b, err := os.ReadFile(filepath.Join(d, "status")); err == nil {
			s.rssMB = kbField(b, "VmRSS:") / 1024
		}
		out[filepath.Base(d)] = s
	}
	return out
}
