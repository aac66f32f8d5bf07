package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// An agent holds its own run's capability and nothing more (issue 24,
// part 1). Two cards run at once: the victim waits until the attacker has
// tried everything, then reports honestly; the attacker knows the victim's
// run id and socket (run ids are no secret, and the sockets' directory is
// listable by drover's user) and tries to (1) find the store in its
// environment and its parent's, (2) report on the victim's run with its
// own token, the victim's socket, or a guessed token, and (3) keep its
// token for after its run (the test replays it once the run has ended).

// capabilityScript is agent.sh: the victim's and the attacker's parts, by
// the card's title in the prompt. Every attempt appends a line
// "try NAME exit=CODE: STDERR" to the side file.
const capabilityScript = `#!/usr/bin/env bash
SIDE=%[1]q
SHARE=%[2]q
prompt=$(cat)
try() { name=$1; shift; err=$("$@" 2>&1 >/dev/null); echo "try $name exit=$?: $(echo "$err" | tr '\n' ' ')" >> "$SIDE"; }
leaks() { cat "$1" | tr '\0' '\n' | grep -E 'DROVER_STORE|DROVER_CONFIG|postgres://|sqlite:|drover\.db' ; }
case "$prompt" in
*victim*)
  echo "$DROVER_RUN_ID" > "$SHARE/victim.run"
  echo "$DROVER_AGENT_SOCKET" > "$SHARE/victim.sock"
  for i in $(seq 1 300); do [ -f "$SHARE/attack.done" ] && break; sleep 0.1; done
  "$DROVER_BIN" run comment "the victim's honest comment"
  "$DROVER_BIN" run done "the victim's honest work"
  exit 0 ;;
*attacker*)
  for i in $(seq 1 300); do [ -s "$SHARE/victim.sock" ] && break; sleep 0.1; done
  VRUN=$(cat "$SHARE/victim.run"); VSOCK=$(cat "$SHARE/victim.sock")
  echo "own env: $(env | grep -E 'DROVER_STORE|DROVER_CONFIG|postgres://|sqlite:|drover\.db')" >> "$SIDE"
  echo "own environ: $(leaks /proc/$$/environ)" >> "$SIDE"
  echo "own environ read: $(cat /proc/$$/environ | tr '\0' '\n' | grep -c '^DROVER_RUN_ID=')" >> "$SIDE"
  echo "parent environ: $(leaks /proc/$PPID/environ)" >> "$SIDE"
  echo "own fds: $(ls -l /proc/$$/fd/ | grep -E 'drover\.db')" >> "$SIDE"
  echo "parent fds: $(ls -l /proc/$PPID/fd/ | grep -E 'drover\.db')" >> "$SIDE"
  echo "parent fds read: $(ls /proc/$PPID/fd/ | wc -l)" >> "$SIDE"
  for p in /proc/[0-9]*; do [ -n "$(leaks $p/environ 2>/dev/null)" ] && echo "needs the sandbox: $(tr '\0' ' ' < $p/cmdline) names the store in its environment" >> "$SIDE"; done
  for p in /proc/[0-9]*; do t=$(tr '\0' '\n' < $p/environ 2>/dev/null | grep '^DROVER_AGENT_TOKEN=' | grep -v "=$DROVER_AGENT_TOKEN$"); [ -n "$t" ] && echo "needs the sandbox: another run's token is readable in $p/environ" >> "$SIDE"; done
  try other-run env DROVER_RUN_ID="$VRUN" "$DROVER_BIN" run block --what pwned --where x --how y
  try other-socket env DROVER_RUN_ID="$VRUN" DROVER_AGENT_SOCKET="$VSOCK" "$DROVER_BIN" run block --what pwned --where x --how y
  try other-socket-no-run env -u DROVER_RUN_ID DROVER_AGENT_SOCKET="$VSOCK" "$DROVER_BIN" run block --what pwned --where x --how y
  try guessed-token env DROVER_RUN_ID="$VRUN" DROVER_AGENT_SOCKET="$VSOCK" DROVER_AGENT_TOKEN=0000000000000000000000000000000000000000000000000000000000000000 "$DROVER_BIN" run block --what pwned --where x --how y
  try no-token env -u DROVER_AGENT_TOKEN DROVER_RUN_ID="$VRUN" DROVER_AGENT_SOCKET="$VSOCK" "$DROVER_BIN" run block --what pwned --where x --how y
  try own "$DROVER_BIN" run comment "the attacker's own comment"
  printf '%%s\n%%s\n%%s\n' "$DROVER_RUN_ID" "$DROVER_AGENT_SOCKET" "$DROVER_AGENT_TOKEN" > "$SHARE/stolen"
  touch "$SHARE/attack.done"
  exit 0 ;;
esac
`

func TestAnAgentReachesItsOwnRunOnly(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{}, "", backend)
		share := t.TempDir()
		if err := os.WriteFile(filepath.Join(e.dir, "agent.sh"), []byte(fmt.Sprintf(capabilityScript, e.side, share)), 0o755); err != nil {
			t.Fatal(err)
		}
		victim, attacker := e.addCard("victim"), e.addCard("attacker")
		e.start()
		eventually(t, 60*time.Second, "both cards in review", func() bool {
			return e.card(victim.Identifier).State == "review" && e.card(attacker.Identifier).State == "review"
		})
		side := e.side_()
		t.Logf("the agents' side file:\n%s", side)
		for _, leak := range []string{"own env", "own environ", "parent environ", "own fds", "parent fds"} {
			if !strings.Contains(side, leak+": \n") {
				t.Errorf("%s names the store:\n%s", leak, side)
			}
		}
		if !strings.Contains(side, "own environ read: 1\n") || strings.Contains(side, "parent fds read: 0\n") {
			t.Errorf("the script could not read its own environment, so its search proves nothing:\n%s", side)
		}
		tries := map[string]string{}
		for _, l := range strings.Split(side, "\n") {
			if name, rest, ok := strings.Cut(strings.TrimPrefix(l, "try "), " "); ok && strings.HasPrefix(l, "try ") {
				tries[name] = rest
			}
		}
		refusals := map[string]string{ // each attempt and what its refusal says
			"other-run":           "serves run",
			"other-socket":        "token",
			"other-socket-no-run": "token",
			"guessed-token":       "token",
			"no-token":            "token",
		}
		for name, want := range refusals {
			got, ok := tries[name]
			if !ok || strings.HasPrefix(got, "exit=0") || !strings.Contains(got, want) {
				t.Errorf("attempt %s: %q, want a refusal saying %q", name, got, want)
			}
		}
		if got := tries["own"]; !strings.HasPrefix(got, "exit=0") {
			t.Errorf("the attacker's call on its own run: %q, want it taken", got)
		}
		v := e.card(victim.Identifier)
		if v.BlockReason != nil {
			t.Errorf("the victim ended blocked: %+v", v.BlockReason)
		}
		for _, id := range []string{victim.Identifier, attacker.Identifier} {
			for _, ev := range e.events(id) {
				if strings.Contains(ev.Reason, "pwned") {
					t.Errorf("%s has an event of the attack: %+v", id, ev)
				}
			}
		}
		// The attacker's capability, kept for after its run: refused, and
		// its socket is gone.
		b, err := os.ReadFile(filepath.Join(share, "stolen"))
		if err != nil {
			t.Fatal(err)
		}
		stolen := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(stolen) != 3 {
			t.Fatalf("stolen capability: %q", b)
		}
		if _, err := os.Stat(stolen[1]); !os.IsNotExist(err) {
			t.Errorf("the ended run's socket %s is still there (%v)", stolen[1], err)
		}
		cmd := exec.Command(testkit.Binary(t), "run", "block", "--what", "pwned", "--where", "x", "--how", "y")
		cmd.Dir = share
		cmd.Env = append(os.Environ(), "DROVER_STORE=", "DROVER_RUN_ID="+stolen[0], "DROVER_AGENT_SOCKET="+stolen[1], "DROVER_AGENT_TOKEN="+stolen[2])
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "does not answer") {
			t.Errorf("a call with the ended run's capability: %v, %s; want it refused", err, out)
		}
		if a := e.card(attacker.Identifier); a.State != "review" || a.BlockReason != nil {
			t.Errorf("the attacker's card after the late call: %s %+v", a.State, a.BlockReason)
		}
	})
}
