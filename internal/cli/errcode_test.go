package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// The CLI's --json errors carry the HTTP API's codes for the same failure,
// with the exit codes docs/reference/cli.md gives.
func TestJSONErrorCodesAreTheAPIs(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "one")
	e.ok("card", "block", "DRV-1", "--reason", "needs credentials")
	for _, c := range []struct {
		args []string
		exit int
		code string
	}{
		{[]string{"card", "show", "DRV-999"}, 2, "card_not_found"},
		{[]string{"card", "mv", "DRV-1", "ready"}, 1, "invalid_transition"},
		{[]string{"card", "add", "--title", ""}, 2, "invalid_input"},
		{[]string{"card", "ls", "extra"}, 2, "bad_usage"},
	} {
		errs := e.fails(c.exit, append([]string{"--json"}, c.args...)...)
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(errs), &env); err != nil || env.Error.Code != c.code {
			t.Errorf("drover --json %s: code %q, want %q (stderr %q)", strings.Join(c.args, " "), env.Error.Code, c.code, errs)
		}
	}
}
