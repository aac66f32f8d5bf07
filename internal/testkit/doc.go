// Package testkit is the one place the tests get their harness from: the
// drover binary built once per test process, an HTTP receiver standing in for
// Slack and webhooks, a fake clock, a store opened on a backend and a
// WORKFLOW.md builder. It is in the spirit of River's riverdbtest and
// testfactory: small pieces a test composes, none of which decides what the
// test asserts.
//
// Only tests import it: production code must not (a test in this package
// checks that cmd/drover does not depend on it).
package testkit
