// Command drover dispatches coding agents on a board of cards.
package main

import (
	"os"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/cli"
)

func main() {
	// A run's supervisor is this binary re-executed (see proc.Supervise).
	if len(os.Args) > 1 && os.Args[1] == proc.SuperviseArg {
		os.Exit(proc.Supervise(os.Args[2:]))
	}
	proc.UseSupervisor()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
