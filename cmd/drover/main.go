// Command drover dispatches coding agents on a board of cards.
package main

import (
	"os"

	"github.com/drover-dev/drover/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
