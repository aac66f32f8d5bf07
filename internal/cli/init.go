package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/tracker"
)

func (a *app) initCmd() *cobra.Command {
	var force bool
	var trackerKind string
	c := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a commented WORKFLOW.md and create the store",
		Long: `Write a commented WORKFLOW.md into DIR (default: the current directory) and create
the store (by default a SQLite file at DIR/.drover/drover.db). An existing
WORKFLOW.md is left alone unless --force is given. --tracker github|linear
writes a tracker: section for dispatching from GitHub Issues or Linear. The
commented real-agent profiles carry a bubblewrap sandbox when one starts on
this machine; otherwise it is commented out with the reason.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			tmpl, err := config.InitTemplateFor(trackerKind)
			if err != nil {
				return usagef("%v", err)
			}
			// The real-agent profiles' sandbox is on once proven here:
			// bwrap present and a sandbox starts.
			tmpl = config.InitSandbox(tmpl, sandbox.Probe(sandbox.Config{Kind: sandbox.KindBwrap, Network: sandbox.NetworkOn}))
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(dir, "WORKFLOW.md")
			if !c.Flags().Changed("config") {
				a.configPath = path
			}
			wrote := false
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || force {
				if err := os.WriteFile(path, []byte(tmpl), 0o644); err != nil {
					return err
				}
				wrote = true
			}
			cfg, err := loadConfig(a.configPath)
			if err != nil {
				return err
			}
			a.cfg = cfg
			st, err := sqlstore.Open(c.Context(), a.dsn())
			if err != nil {
				return err
			}
			a.st = st
			if wrote {
				fmt.Fprintf(a.out, "wrote %s\n", path)
			} else {
				fmt.Fprintf(a.out, "kept the existing %s (use --force to overwrite)\n", path)
			}
			fmt.Fprintf(a.out, "store ready: %s\n", store.RedactDSN(a.dsn()))
			fmt.Fprint(a.out, nextSteps(trackerKind, path, invokedAs()))
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite an existing WORKFLOW.md")
	c.Flags().StringVar(&trackerKind, "tracker", "", "where cards come from: github or linear (default: drover's own board)")
	return c
}

// InitLabel is the label init's tracker configs require (tracker.required_labels)
// and its next steps tell the user to put on the issues drover may take.
const InitLabel = "drover"

// nextSteps is what init prints after the store is ready: the commands with
// drover as the user invoked it (self), and --config when the WORKFLOW.md is
// not ./WORKFLOW.md (the commands would not find it otherwise).
func nextSteps(trackerKind, path, self string) string {
	if filepath.Clean(path) != "WORKFLOW.md" {
		self += " --config " + shellQuote(path)
	}
	switch trackerKind {
	case tracker.KindGitHub:
		return fmt.Sprintf("\nnext:\n  set tracker.repo in %s, export GITHUB_TOKEN\n"+
			"  put the label %q on the issues drover may take (tracker.required_labels)\n  %s serve\n", path, InitLabel, self)
	case tracker.KindLinear:
		return fmt.Sprintf("\nnext:\n  set tracker.provider.project_slug in %s, export LINEAR_API_KEY\n"+
			"  put the label %q on the issues drover may take (tracker.required_labels)\n  %s serve\n", path, InitLabel, self)
	}
	return fmt.Sprintf("\nnext:\n  %s card add --title \"My first card\" --spec '{\"sim\":[\"succeeded\"]}'\n  %s serve\n", self, self)
}
