// Package e2e_test drives the real drover binary: it writes a WORKFLOW.md
// into a temporary directory, runs `drover serve` as a subprocess and reads
// what the outside world can see (CLI JSON, processes, a webhook receiver).
package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// wf holds the parts of a test's WORKFLOW.md that vary.
type wf struct {
	MaxConcurrent int
	Poll          string // dispatch.poll_interval (default 200ms)
	Lease         string // dispatch.lease (default 3s)
	Default       string // agents.default (default script)
	Profiles      string // extra YAML lines under agents.profiles (indented 4)
	Agents        string // extra YAML lines under agents, after profiles (indented 2)
	Policy        string // extra YAML lines under policy (indented 2)
	Notify        string // the YAML under notify, not indented (optional)
	Columns       string // replaces the default board's columns (optional, indented 4)
	Node          string // dispatch.node (default: the host name)
	Port          int    // server.port (default 0: no dashboard/API)
	Tracker       string // the YAML under tracker, not indented (optional)
}

func (w wf) render() string {
	if w.MaxConcurrent == 0 {
		w.MaxConcurrent = 2
	}
	if w.Poll == "" {
		w.Poll = "200ms"
	}
	if w.Lease == "" {
		w.Lease = "3s"
	}
	if w.Default == "" {
		w.Default = "script"
	}
	b := testkit.NewWorkflow()
	if w.Columns != "" {
		b.Set("board", "prefix: DRV\ncolumns:\n"+outdent(w.Columns))
	}
	b.Set("agents", "default: "+w.Default+`
profiles:
  sim: {kind: sim}
  script: {kind: command, command: ./agent.sh, prompt: stdin}
`+outdent(w.Profiles)+outdent(w.Agents)).
		Set("policy", "backoff: {base: 100ms, max: 300ms, jitter: 0}\n"+outdent(w.Policy)).
		Set("dispatch", fmt.Sprintf("poll_interval: %s\nlease: %s\nmax_concurrent: %d", w.Poll, w.Lease, w.MaxConcurrent)+nodeLine(w.Node)).
		Set("hooks", "timeout: 10s").
		Set("workspace", "root: .drover/workspaces\ncleanup: never")
	if w.Notify != "" {
		b.Set("notify", w.Notify)
	}
	if w.Tracker != "" {
		b.Set("tracker", w.Tracker)
	}
	return b.Set("server", fmt.Sprintf("port: %d", w.Port)).
		Prompt("Work on {{ card.identifier }}: {{ card.title }} (attempt {{ attempt }})").
		String()
}

func nodeLine(node string) string {
	if node == "" {
		return ""
	}
	return "\nnode: " + node
}

// outdent takes the two spaces of a section's indentation off every line,
// so the wf fields can be written as they stand in the file.
func outdent(lines string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  "))
	}
	return b.String()
}

// env is one test's drover installation.
type env struct {
	t     *testing.T
	dir   string
	dsn   string // "" = the default SQLite file
	side  string // the agent scripts' side-channel file
	serve *server
	extra []string // more variables for serve and the CLI (after os.Environ's)
}

type server struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// newEnv writes WORKFLOW.md (and, when script is not "", agent.sh) into a
// fresh directory, with a store on backend (PostgreSQL skips without one).
func newEnv(t *testing.T, w wf, script string, backend testkit.Backend) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.side = filepath.Join(e.dir, "side.log")
	if backend == testkit.Postgres {
		e.dsn = testkit.DSN(t, backend)
	}
	e.writeFile("WORKFLOW.md", w.render())
	if script != "" {
		e.writeScript(script)
	}
	t.Cleanup(func() {
		if e.serve != nil {
			e.kill(syscall.SIGKILL)
		}
		if t.Failed() {
			e.dumpLogs()
		}
	})
	return e
}

func (e *env) writeFile(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, name), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// writeScript writes agent.sh. The body runs after a line
// "ID ATTEMPT PID start TIME" is appended to the side file; SIDE, LOG_END
// and the DROVER_* variables are available.
func (e *env) writeScript(body string) {
	e.t.Helper()
	s := fmt.Sprintf(`#!/bin/sh
SIDE=%q
cat >/dev/null
echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $$ start $(date +%%s.%%N)" >> "$SIDE"
log_end() { echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $$ end $(date +%%s.%%N)" >> "$SIDE"; }
%s
`, e.side, body)
	p := filepath.Join(e.dir, "agent.sh")
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) cmdEnv() []string {
	out := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DROVER_") {
			out = append(out, kv)
		}
	}
	if e.dsn != "" {
		out = append(out, "DROVER_STORE="+e.dsn)
	}
	return append(out, e.extra...)
}

// cli is the binary run in the env's directory with its environment.
func (e *env) cli() testkit.CLI { return testkit.CLI{T: e.t, Dir: e.dir, Env: e.cmdEnv()} }

// drover runs one CLI command in the env's directory.
func (e *env) drover(stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.cli().Run(stdin, args...)
}

// ok runs a command that must succeed and returns its stdout.
func (e *env) ok(args ...string) string { e.t.Helper(); return e.cli().OK(args...) }

// jsonOf runs a command with --json and decodes its stdout into v.
func (e *env) jsonOf(v any, args ...string) { e.t.Helper(); e.cli().JSON(v, args...) }

// Shapes read from the CLI's JSON (only the fields the tests look at).
type card struct {
	ID            string          `json:"id"`
	Identifier    string          `json:"identifier"`
	Title         string          `json:"title"`
	State         string          `json:"state"`
	StateReason   string          `json:"state_reason"`
	BlockReason   *blockReason    `json:"block_reason"`
	GaveUp        json.RawMessage `json:"gave_up"`
	Claim         *claim          `json:"claim"`
	NextAttemptAt *time.Time      `json:"next_attempt_at"`
	RetryEpoch    int             `json:"retry_epoch"`
	Events        []event         `json:"events"`
	Runs          []run           `json:"runs"`
}

type blockReason struct {
	Kind  string `json:"kind"`
	What  string `json:"what"`
	Where string `json:"where"`
	How   string `json:"how"`
}

type claim struct {
	Owner      string    `json:"owner"`
	Epoch      int64     `json:"epoch"`
	LeaseUntil time.Time `json:"lease_until"`
}

type run struct {
	ID         string     `json:"id"`
	CardID     string     `json:"card_id"`
	Attempt    int        `json:"attempt"`
	RetryEpoch int        `json:"retry_epoch"`
	Agent      string     `json:"agent"`
	Outcome    string     `json:"outcome"`
	Kind       string     `json:"kind"`
	Counted    bool       `json:"counted"`
	ExitCode   *int       `json:"exit_code"`
	Error      string     `json:"error"`
	ClaimedAt  time.Time  `json:"claimed_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

type event struct {
	Seq    int64           `json:"seq"`
	CardID string          `json:"card_id"`
	RunID  string          `json:"run_id"`
	Type   string          `json:"type"`
	Actor  string          `json:"actor"`
	Reason string          `json:"reason"`
	Data   json.RawMessage `json:"data"`
}

type agentRow struct {
	Name   string     `json:"name"`
	State  string     `json:"state"`
	Reason string     `json:"reason"`
	Until  *time.Time `json:"until"`
}

func (e *env) addCard(title string, extra ...string) card {
	e.t.Helper()
	var c card
	e.jsonOf(&c, append([]string{"card", "add", "--title", title}, extra...)...)
	if c.Identifier == "" {
		e.t.Fatalf("card add printed no identifier")
	}
	return c
}

func (e *env) card(id string) card {
	e.t.Helper()
	var c card
	e.jsonOf(&c, "card", "show", id)
	return c
}

func (e *env) runs(id string) []run {
	e.t.Helper()
	var rs []run
	if id == "" {
		e.jsonOf(&rs, "runs")
	} else {
		e.jsonOf(&rs, "runs", id)
	}
	return rs
}

// runsInOrder is a card's runs in the order they were claimed.
func (e *env) runsInOrder(id string) []run {
	rs := e.runs(id)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].ClaimedAt.Before(rs[j].ClaimedAt) })
	return rs
}

func (e *env) events(id string) []event {
	e.t.Helper()
	var evs []event
	e.jsonOf(&evs, "events", "--card", id)
	return evs
}

func (e *env) agents() map[string]agentRow {
	e.t.Helper()
	var rows []agentRow
	e.jsonOf(&rows, "agent", "ls")
	out := map[string]agentRow{}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out
}

// start runs `drover serve` in its own process group, stderr to a file.
func (e *env) start() {
	e.t.Helper()
	if e.serve != nil {
		e.t.Fatal("serve already running")
	}
	logPath := filepath.Join(e.dir, fmt.Sprintf("serve-%d.log", time.Now().UnixNano()))
	f, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(testkit.Binary(e.t), "serve", "--log-level", "debug")
	cmd.Dir = e.dir
	cmd.Env = e.cmdEnv()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s := &server{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		f.Close()
		close(s.done)
	}()
	e.serve = s
}

// kill signals serve (only its pid: its agents are in their own groups)
// and waits for it to exit, returning how long that took.
func (e *env) kill(sig syscall.Signal) time.Duration {
	e.t.Helper()
	s := e.serve
	start := time.Now()
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		e.t.Errorf("drover serve did not exit within 30s of %v", sig)
	}
	e.serve = nil
	return time.Since(start)
}

func (e *env) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(e.dir, "serve-*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 20000 {
			b = b[len(b)-20000:]
		}
		e.t.Logf("---- %s ----\n%s", filepath.Base(l), b)
	}
	if b, err := os.ReadFile(e.side); err == nil {
		e.t.Logf("---- side.log ----\n%s", b)
	}
}

// sideLine is one line the agent script wrote.
type sideLine struct {
	ID      string
	Attempt int
	PID     int
	What    string // start or end
	At      float64
}

func (e *env) sideLines() []sideLine {
	b, err := os.ReadFile(e.side)
	if err != nil {
		return nil
	}
	var out []sideLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 {
			continue
		}
		a, _ := strconv.Atoi(f[1])
		p, _ := strconv.Atoi(f[2])
		at, _ := strconv.ParseFloat(f[4], 64)
		out = append(out, sideLine{f[0], a, p, f[3], at})
	}
	return out
}

func (e *env) starts() []sideLine {
	var out []sideLine
	for _, l := range e.sideLines() {
		if l.What == "start" {
			out = append(out, l)
		}
	}
	return out
}

// eventually polls cond until it returns true or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveChildren lists the live child processes of ppid.
func liveChildren(ppid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, en := range ents {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + en.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if p, _ := strconv.Atoi(string(f[1])); p == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// notifyYAML is the notify section that sends every event to r's /hook.
func notifyYAML(r *testkit.Receiver) string {
	return fmt.Sprintf("webhook: {url: %s/hook}\nallow_private: true\n", r.URL)
}

// messages are the JSON bodies r received, each re-encoded (a body that is
// not JSON stands as {"raw": body}).
func messages(r *testkit.Receiver) [][]byte {
	var out [][]byte
	for _, q := range r.Requests("") {
		var m map[string]any
		_ = json.Unmarshal(q.Body, &m)
		if m == nil {
			m = map[string]any{"raw": string(q.Body)}
		}
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// mentioning counts the messages r received that mention every word.
func mentioning(r *testkit.Receiver, words ...string) int {
	n := 0
	for _, b := range messages(r) {
		ok := true
		for _, w := range words {
			if !bytes.Contains(b, []byte(w)) {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// received is every message r got, for failure messages.
func received(r *testkit.Receiver) string {
	var ms []json.RawMessage
	for _, b := range messages(r) {
		ms = append(ms, b)
	}
	b, _ := json.MarshalIndent(ms, "", " ")
	return string(b)
}

func attempts(rs []run) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Attempt)
	}
	return out
}
