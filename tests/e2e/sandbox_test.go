package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// sandboxMark is in drover serve's environment only: an agent that finds
// it in some /proc/*/environ has seen drover's own environment.
const sandboxMark = "DROVER_SANDBOX_TEST_MARK=c0ffee77"

// fakeHome is an operator's home with a key and a shell history, the HOME
// drover serve runs with (the real one is never touched).
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".ssh/id_ed25519": "PRIVATE KEY\n", ".bash_history": "export TOKEN=hunter2\n"} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// attackScript tries each way out of the sandbox, writes one line per try
// into its workspace ("NAME refused" or "NAME ESCAPED"), starts two
// children that try to outlive the run (setsid, double fork) and ends
// cleanly after writing out.txt.
func attackScript(dir, home string) string {
	tries := [][2]string{
		{"store_file", fmt.Sprintf("cat %q", filepath.Join(dir, ".drover", "drover.db"))},
		// the workspace's parents, and those of the run's own capability
		// directory (.drover/agent/run-…), exist inside as mount points
		{"store_dir", fmt.Sprintf("ls -a %q | grep -v -x -e . -e .. -e workspaces -e agent", filepath.Join(dir, ".drover"))},
		{"other_capabilities", fmt.Sprintf("ls -a %q 2>/dev/null | grep -v -x -e . -e .. -e \"$(basename \"$(dirname \"$DROVER_AGENT_SOCKET\")\")\" | grep -q .", filepath.Join(dir, ".drover", "agent"))},
		{"workflow_dir", fmt.Sprintf("ls %q/WORKFLOW.md", dir)},
		{"other_workspace_read", fmt.Sprintf("cat %q", filepath.Join(dir, ".drover", "workspaces", "DRV-99", "secret.txt"))},
		{"other_workspace_write", fmt.Sprintf("echo pwned > %q", filepath.Join(dir, ".drover", "workspaces", "DRV-99", "pwned"))},
		// another card's sandbox home, at its host path
		{"other_card_home", fmt.Sprintf("cat %q", filepath.Join(dir, ".drover", "homes", "DRV-99", ".claude.json"))},
		{"ssh_key", fmt.Sprintf("cat %q", filepath.Join(home, ".ssh", "id_ed25519"))},
		{"shell_history", fmt.Sprintf("cat %q", filepath.Join(home, ".bash_history"))},
		{"write_system", "echo pwned > " + systemPwned},
		{"drover_environ", "grep -l c0ffee77 /proc/*/environ 2>/dev/null | grep -q ."},
		{"parent_environ", "grep -q c0ffee77 /proc/$PPID/environ"},
		{"open_store_fds", "for f in /proc/[0-9]*/fd/*; do readlink $f; done 2>/dev/null | grep -q drover.db"},
	}
	var b strings.Builder
	b.WriteString(`WS="$DROVER_WORKSPACE"
try() { if sh -c "$2" >/dev/null 2>&1; then echo "$1 ESCAPED" >> "$WS/findings"; else echo "$1 refused" >> "$WS/findings"; fi; }
`)
	for _, tr := range tries {
		fmt.Fprintf(&b, "try %s %s\n", tr[0], shellQuote(tr[1]))
	}
	// The test's directory is under /tmp, the run's private tmpfs inside:
	// this write lands there, never on the host (the test looks).
	fmt.Fprintf(&b, "echo pwned > %q 2>/dev/null\n", filepath.Join(dir, "pwned"))
	b.WriteString(`setsid sleep 313.7 </dev/null >/dev/null 2>&1 &
( sleep 313.8 </dev/null >/dev/null 2>&1 & ) 
sleep 0.2
pgrep -f 'sleep 313.[78]' >/dev/null && echo "escapers started" >> "$WS/findings"
echo ok > "$WS/out.txt"
exit 0
`)
	return b.String()
}

// systemPwned is the system file the agent tries to write (removed after
// the test should the sandbox fail).
const systemPwned = "/usr/drover-sandbox-test-pwned"

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hostHas reports whether a process on the host has s in its command line.
func hostHas(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, en := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			return true
		}
	}
	return false
}

// A sandboxed command agent that tries to read drover's store, another
// card's workspace, the operator's key and shell history, to write outside
// its workspace, to read drover's environment through /proc and to leave
// processes behind fails at every step; its workspace write works and the
// card finishes.
func TestSandboxHoldsAnAttackingAgent(t *testing.T) {
	gate.Bwrap.Require(t)
	t.Cleanup(func() { os.Remove(systemPwned) })
	home := fakeHome(t)
	t.Setenv("HOME", home)
	e := newEnv(t, wf{Default: "boxed", Profiles: "    boxed: {kind: command, command: ./agent.sh, prompt: stdin, sandbox: {kind: bwrap}}\n"}, "", testkit.SQLite)
	e.writeScript(attackScript(e.dir, home))
	e.extra = []string{sandboxMark}
	other := filepath.Join(e.dir, ".drover", "workspaces", "DRV-99")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "secret.txt"), []byte("another card's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	otherHome := filepath.Join(e.dir, ".drover", "homes", "DRV-99")
	if err := os.MkdirAll(otherHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(otherHome, ".claude.json"), []byte(`{"session":"another card's"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := e.addCard("attack")
	e.start()
	eventually(t, 30*time.Second, "the card reaches review", func() bool { return e.card(c.Identifier).State == "review" })

	ws := filepath.Join(e.dir, ".drover", "workspaces", c.Identifier)
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("the workspace write: %q, %v", b, err)
	}
	b, err := os.ReadFile(filepath.Join(ws, "findings"))
	if err != nil {
		t.Fatal(err)
	}
	findings := string(b)
	t.Logf("findings:\n%s", findings)
	if strings.Contains(findings, "ESCAPED") {
		t.Errorf("the agent got out of its sandbox:\n%s", findings)
	}
	if n := strings.Count(findings, "refused"); n != 13 {
		t.Errorf("%d tries refused, want 13:\n%s", n, findings)
	}
	// The card's own home (where a CLI keeps its session) is on the host
	// under .drover/homes and kept for the card's next run.
	if fi, err := os.Stat(filepath.Join(e.dir, ".drover", "homes", c.Identifier)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the card's sandbox home: %v, %v; want a 0700 directory", fi, err)
	}
	if !strings.Contains(findings, "escapers started") {
		t.Errorf("the setsid and double-fork children did not start:\n%s", findings)
	}
	eventually(t, 10*time.Second, "the setsid and double-fork children die with the run", func() bool {
		return !hostHas("sleep 313.7") && !hostHas("sleep 313.8")
	})
	for _, p := range []string{filepath.Join(e.dir, "pwned"), filepath.Join(other, "pwned"), systemPwned} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "id_ed25519")); string(b) != "PRIVATE KEY\n" {
		t.Errorf("the operator's key changed: %q", b)
	}
	if c := e.card(c.Identifier); c.State != "review" {
		t.Errorf("the card's state is %s, want review", c.State)
	}
}

// A sandboxed profile whose sandbox cannot start (bwrap is missing) is
// paused with the reason at load, and its card never runs unsandboxed.
func TestSandboxThatCannotStartPausesTheProfile(t *testing.T) {
	gate.Bwrap.Require(t)
	e := newEnv(t, wf{Default: "boxed", Profiles: "    boxed: {kind: command, command: ./agent.sh, prompt: stdin, sandbox: {kind: bwrap}}\n"}, "exit 0", testkit.SQLite)
	e.extra = []string{"DROVER_BWRAP=" + filepath.Join(e.dir, "no-such-bwrap")}
	c := e.addCard("never unsandboxed")
	e.start()
	eventually(t, 20*time.Second, "the profile is paused", func() bool { return e.agents()["boxed"].State == "paused" })
	why := e.agents()["boxed"].Reason
	for _, w := range []string{"sandbox", "bwrap", "no-such-bwrap", "agents.profiles.boxed.sandbox"} {
		if !strings.Contains(why, w) {
			t.Errorf("the pause's reason %q does not say %q", why, w)
		}
	}
	time.Sleep(time.Second) // a few dispatch passes
	if s := e.starts(); len(s) > 0 {
		t.Fatalf("the agent ran unsandboxed: %+v", s)
	}
	if rs := e.runs(c.Identifier); len(rs) > 0 {
		t.Errorf("the card has runs: %+v", rs)
	}
	if c := e.card(c.Identifier); c.State != "ready" {
		t.Errorf("the card is %s, want ready", c.State)
	}
	var st struct {
		Agents []struct {
			Name   string `json:"name"`
			State  string `json:"state"`
			Reason string `json:"reason"`
		} `json:"agents"`
	}
	e.jsonOf(&st, "status")
	found := false
	for _, a := range st.Agents {
		found = found || (a.Name == "boxed" && a.State == "paused")
	}
	if !found {
		t.Errorf("drover status does not show the paused profile: %+v", st.Agents)
	}
}

// A sandboxed agent with no network reports through its run's capability:
// the socket's directory is bound in, so drover run reaches drover serve
// while the store stays out of sight. On both backends (PostgreSQL's DSN
// is in no agent's environment, and the network is off besides).
func TestASandboxedAgentReportsThroughItsCapability(t *testing.T) {
	gate.Bwrap.Require(t)
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{Default: "boxed", Profiles: "    boxed: {kind: command, command: ./agent.sh, prompt: stdin, sandbox: {kind: bwrap, network: off}}\n"}, "", backend)
		e.writeScript(fmt.Sprintf(`test -S "$DROVER_AGENT_SOCKET" || { echo "no socket at $DROVER_AGENT_SOCKET" >&2; exit 3; }
test -e %q && { echo "the store is visible" >&2; exit 4; }
"$DROVER_BIN" run comment "from inside the sandbox" || exit 5
"$DROVER_BIN" run block --what "needs the staging key" --where "deploy step" --how "add STAGING_KEY and resume" || exit 6
exit 0
`, filepath.Join(e.dir, ".drover", "drover.db")))
		c := e.addCard("report from inside")
		e.start()
		eventually(t, 30*time.Second, "the card is blocked by its agent's report", func() bool { return e.card(c.Identifier).State == "blocked" })
		got := e.card(c.Identifier)
		if got.BlockReason == nil || got.BlockReason.What != "needs the staging key" || got.BlockReason.Where != "deploy step" {
			t.Fatalf("the card's block reason is %+v, want the agent's own", got.BlockReason)
		}
	})
}
