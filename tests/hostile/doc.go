// Package hostile holds the hostile-card corpus test: cards whose titles,
// bodies, labels, specs and agent names are written to break a dispatcher
// (shell and template injection, path traversal, invalid UTF-8, NUL bytes,
// huge or deeply nested input), added through the operator service and run
// by the real dispatcher with a command agent. See hostile_test.go.
package hostile
