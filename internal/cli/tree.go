package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// Tree is drover's command tree as Main builds it, wired to nothing: for
// what reads the tree without running a command (tests/docs checks every
// `drover …` command the docs quote against it). Running a command of it
// is Main's job.
func Tree() *cobra.Command {
	a := &app{out: io.Discard, jsonOut: io.Discard, errw: io.Discard}
	return a.rootCmd()
}
