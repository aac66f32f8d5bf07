// Command release builds drover's release artifacts into a directory; run by
// .ci/release DIR [--snapshot] from the module's root. See package release.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/drover-dev/drover/internal/release"
)

func main() {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	snapshot := fs.Bool("snapshot", false, "build <next>-SNAPSHOT-<commit>: no tag or clean tree needed")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: .ci/release DIR [--snapshot]")
		fs.PrintDefaults()
	}
	// The flag may come before or after DIR.
	var args []string
	rest := os.Args[1:]
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			os.Exit(2)
		}
		if fs.NArg() == 0 {
			break
		}
		args, rest = append(args, fs.Arg(0)), fs.Args()[1:]
	}
	if len(args) != 1 {
		fs.Usage()
		os.Exit(2)
	}
	if _, err := release.Run(".", args[0], *snapshot, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
