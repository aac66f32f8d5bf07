package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/version"
)

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print drover's version, commit, build date, Go version and the store schema it expects",
		Long: `Print which drover this is: its version, the commit it was built from (with
+dirty for uncommitted changes), the commit's date (or the release build's
date), the Go release that built it, and the store schema version it migrates
stores to. A store at a higher schema version was written by a newer drover
and is refused. drover --version prints the same on one line.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			in := version.Get()
			if a.asJSON {
				return a.printJSON(in)
			}
			_, err := fmt.Fprintf(a.out, "version:      %s\ncommit:       %s\nmodified:     %t\ndate:         %s\ngo:           %s\nstore schema: %d\n",
				in.Version, in.Commit, in.Modified, in.Date, in.GoVersion, in.Schema)
			return err
		},
	}
}
