package config

import (
	"encoding/json"
	"testing"

	"github.com/drover-dev/drover/internal/policy"
)

// TestPolicyDefaultsComeFromPolicy: a WORKFLOW.md that leaves policy: out,
// or gives it empty, runs on exactly policy.Defaults(); the config package
// keeps no defaults of its own that could drift from the policy package's.
func TestPolicyDefaultsComeFromPolicy(t *testing.T) {
	want, _ := json.Marshal(policy.Defaults())
	for _, src := range []string{"---\n---\nhi\n", "---\npolicy: {}\n---\nhi\n", "---\npolicy:\n---\nhi\n"} {
		cfg := mustParse(t, src)
		got, _ := json.Marshal(cfg.Policy)
		if string(got) != string(want) {
			t.Errorf("%q: policy =\n%s\nwant policy.Defaults() =\n%s", src, got, want)
		}
	}
}
