package policy

import (
	"fmt"
	"regexp"
)

// Rule is a per-profile classification override (WORKFLOW.md
// agents.profiles.NAME.match), tried before every built-in signal. A rule
// matches when all of its set conditions hold: Regex (if not empty) matches
// stdout+stderr, and ExitCode (if set) equals the exit code. A rule with
// neither condition never matches.
type Rule struct {
	Name     string `json:"name" yaml:"name"`
	Regex    string `json:"regex" yaml:"regex" cfg:"verbatim"` // matched against stdout+stderr
	ExitCode *int   `json:"exit_code" yaml:"exit_code"`        // matched against the exit code
	Kind     Kind   `json:"kind" yaml:"kind"`
}

// Validate reports what is wrong with r, naming the field, or nil.
func (r Rule) Validate() error {
	if r.Name == "" {
		return fmt.Errorf("name: a match rule needs a name")
	}
	if r.Regex == "" && r.ExitCode == nil {
		return fmt.Errorf("match %q: set regex, exit_code or both", r.Name)
	}
	if r.Regex != "" {
		if _, err := regexp.Compile(r.Regex); err != nil {
			return fmt.Errorf("match %q: regex: %v", r.Name, err)
		}
	}
	if r.Kind != KindSucceeded && !r.Kind.Valid() {
		return fmt.Errorf("match %q: kind: %q is not a failure kind", r.Name, r.Kind)
	}
	return nil
}

// matches reports whether r applies to this exit code and output. An invalid
// regex never matches (config validation reports it before a run).
func (r Rule) matches(exitCode int, text string) bool {
	if r.Regex == "" && r.ExitCode == nil {
		return false
	}
	if r.ExitCode != nil && *r.ExitCode != exitCode {
		return false
	}
	if r.Regex != "" {
		re, err := regexp.Compile(r.Regex)
		if err != nil || !re.MatchString(text) {
			return false
		}
	}
	return true
}
