package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// benchScaleHelp lists the scale scenarios in drover bench --help.
const benchScaleHelp = ``

func (a *app) benchScale(c *cobra.Command, scenario string, f benchFlags) error {
	return fmt.Errorf("bench %s: not built yet", scenario)
}
