// Package testsummary is the last package of `go test ./...` (import paths
// sort tests/… before testsummary): its one test prints which suites the
// run skipped on this machine and what turns each on (see
// internal/testkit/gate), where a plain `go test ./...` shows it.
//
// How it is shown, and why so: in package-list mode the go command keeps a
// passing package's output to itself, -v aside (cmd/go's runTestActor
// buffers the test binary's stdout and stderr and drops them on success), so
// neither a print nor t.Log of a passing test reaches the user. The test
// therefore writes the summary to the go command's own stderr (its parent's
// file descriptor 2, opened through /proc on Linux) — where go prints build
// errors — and falls back to the terminal (/dev/tty) where that cannot be
// done safely. It waits first until the other packages' test binaries (the
// go command's other children) have exited: the go command starts test
// binaries in package order, this one last, but runs them in parallel.
// With -v (and -json) the package's output is shown, so there the summary
// is logged with t.Log instead.
//
// The summary is computed from the gates themselves, in this environment:
// a gated suite skips exactly when its gate is off, so the summary is true
// of every package in the run, also of those whose results come from the
// test cache (which run nothing and could report nothing). This package's
// own result is kept out of the cache while it prints a summary (a cached
// pass would replay no summary).
package testsummary
