package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// TestFingerprintKeepsWhatNamesTheFault: distinct faults whose words differ
// only in what names the fault (a quoted word, a status, which package
// failed) keep distinct fingerprints.
func TestFingerprintKeepsWhatNamesTheFault(t *testing.T) {
	pairs := [][2]string{
		{`Error: {"error": {"type": "invalid_request_error", "message": "prompt is too long"}}`,
			`Error: {"error": {"type": "not_found_error", "message": "model does not exist"}}`},
		{`fatal: "permission denied"`, `fatal: "disk full"`},
		{"verify: `go test ./...` exited with code 1 after the agent's clean exit: ok  \tgithub.com/acme/app/api\t0.12s\nFAIL\tgithub.com/acme/app/store\t0.40s\nFAIL",
			"verify: `go test ./...` exited with code 1 after the agent's clean exit: ok  \tgithub.com/acme/app/api\t0.31s\nFAIL\tgithub.com/acme/app/billing\t1.02s\nFAIL"},
		{"request failed with status 404", "request failed with status 500"},
		{"TypeError: Cannot read properties of undefined (reading 'map') at /app/src/a.js:10:5",
			"TypeError: Cannot read properties of undefined (reading 'length') at /app/src/b.js:99:1"},
		{"ImportError: cannot import name 'foo' from 'bar'", "ImportError: cannot import name 'baz' from 'qux'"},
		{"exit status 1: can't open file, it's locked by pid 12", "exit status 1: can't parse the yaml, it's invalid at line 12"},
	}
	for _, p := range pairs {
		if Fingerprint(KindUnknown, p[0], 1) == Fingerprint(KindUnknown, p[1], 1) {
			t.Errorf("two faults, one fingerprint:\n %q → %q\n %q → %q", p[0], NormalizeError(p[0]), p[1], NormalizeError(p[1]))
		}
	}
}

// TestDroversOwnWordsAreNotInformative: a run drover stopped, or one that
// ended with no text, is fingerprinted by its exit alone.
func TestDroversOwnWordsAreNotInformative(t *testing.T) {
	for _, s := range []Signals{
		{ExitCode: -1, Signaled: true, KilledFor: "timeout"},
		{ExitCode: -1, Signaled: true, KilledFor: "stall"},
		{ExitCode: 0, Structured: Structured{Present: true, Finished: true, Subtype: "error_max_turns"}},
	} {
		c := Classify(s, nil)
		if fp := FingerprintOf(c, s.ExitCode); Informative(fp) {
			t.Errorf("%s (%s) %q → %s: informative, though the words are drover's own", c.Kind, c.Source, c.Message, fp)
		}
	}
}

// TestChangeDuringTheLastRunIsNew: a comment written while the third
// attempt runs, or a card or profile changed since it was claimed, is
// something the next attempt has: no repeat block.
func TestChangeDuringTheLastRunIsNew(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fp := Fingerprint(KindUnknown, "gizmo relay refused the handshake", 4)
	basis := map[string]string{"card": "a"}
	var h []board.Run
	for i := 0; i < 3; i++ {
		h = append(h, board.Run{ID: fmt.Sprint(i), Attempt: i + 1, Counted: true, Outcome: board.OutcomeFailed, Fingerprint: fp, Basis: basis,
			ClaimedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	comment := t0.Add(2*time.Minute + 10*time.Second) // during attempt 3
	if n := Repeats(h, []time.Time{comment}, nil); n >= 3 {
		t.Errorf("Repeats = %d with a comment written during attempt 3: the card is blocked though its next attempt has the comment", n)
	}
	if n := Repeats(h, nil, map[string]string{"card": "b"}); n >= 3 {
		t.Errorf("Repeats = %d with the card edited since attempt 3 was claimed", n)
	}
	if n := Repeats(h, nil, basis); n != 3 {
		t.Errorf("Repeats = %d with nothing changed, want 3", n)
	}
}

// TestBannerDoesNotHideTheError: warnings printed before the error do not
// fill the fingerprint: its tail is hashed too.
func TestBannerDoesNotHideTheError(t *testing.T) {
	banner := "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated. Please use a userland alternative instead.\n" +
		"(Use `node --trace-deprecation ...` to show where the warning was created)\n" +
		"(node:4242) ExperimentalWarning: CommonJS module /usr/lib/node_modules/agent/dist/index.js is loading ES Module /usr/lib/node_modules/agent/dist/esm.mjs using require(). Support for loading ES Module in require() is an experimental feature and might change at any time\n" +
		"npm WARN config production Use `--omit=dev` instead.\n"
	a := Fingerprint(KindUnknown, banner+"Error: the repository has no Makefile", 1)
	b := Fingerprint(KindUnknown, banner+"Error: account suspended for abuse", 1)
	if a == b {
		t.Errorf("two different errors after the same warnings share fingerprint %s", a)
	}
}
