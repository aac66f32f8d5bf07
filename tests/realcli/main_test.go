// Package realcli runs the real agent CLIs (Claude Code, Codex), installed
// from npm at pinned versions by .ci/agent-clis, through `drover serve`
// against testkit/fakeprovider, and checks that every scripted failure
// settles the card where an operator would expect it.
//
// Run:  export DROVER_AGENT_CLIS="$(.ci/agent-clis)" && go test ./tests/realcli/
//
// Without DROVER_AGENT_CLIS every test skips. With it, the test binary
// re-runs itself inside a loopback-only network namespace (unshare -n, then
// ip link set lo up) so no CLI can reach anything but the fake provider;
// where unshare is not permitted it runs in place and says so.
package realcli

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
)

const howToRun = "real-CLI tests need the CLIs: run `export DROVER_AGENT_CLIS=\"$(.ci/agent-clis)\"` then `go test ./tests/realcli/`"

// netnsVar marks the child already inside the namespace.
const netnsVar = "DROVER_REALCLI_NETNS"

// netnsNote says how the run is isolated, for the tests' logs.
var netnsNote = "inside a loopback-only network namespace"

func TestMain(m *testing.M) {
	if os.Getenv("DROVER_AGENT_CLIS") != "" && os.Getenv(netnsVar) == "" {
		// Probe the whole recipe first (unshare permitted, ip installed), so
		// a machine without either runs in place instead of failing.
		if exec.Command("unshare", "-n", "sh", "-c", "ip link set lo up").Run() == nil {
			args := append([]string{"-n", "--", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, os.Args[0]}, os.Args[1:]...)
			cmd := exec.Command("unshare", args...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			cmd.Env = append(os.Environ(), netnsVar+"=1")
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				os.Exit(ee.ExitCode())
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "realcli:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		netnsNote = "WITHOUT a network namespace (unshare -n or ip is not available here): the CLIs could reach the network"
	}
	testkit.Main(m)
}
