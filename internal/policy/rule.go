package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/drover-dev/drover/internal/suggest"
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

// Validate reports what is wrong with r: every problem, joined, each
// "KEY: message" with KEY the rule's key at fault (regex, kind).
func (r Rule) Validate() error {
	var errs []error
	if _, err := regexp.Compile(r.Regex); err != nil {
		errs = append(errs, fmt.Errorf("regex: does not compile: %v", err))
	} else if r.Regex == "" && r.ExitCode == nil {
		errs = append(errs, errors.New("regex: missing, and so is exit_code: the rule matches nothing; give a regex, an exit_code or both"))
	}
	if r.Kind != KindSucceeded && !r.Kind.Valid() {
		errs = append(errs, fmt.Errorf("kind: %q is not a failure kind%s; use one of %s", r.Kind, suggest.DidYouMean(suggest.Closest(string(r.Kind), kindNames())), strings.Join(kindNames(), ", ")))
	}
	return errors.Join(errs...)
}

func kindNames() []string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return s
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
