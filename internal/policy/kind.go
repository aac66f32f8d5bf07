// Package policy turns what happened on a run into what drover does next. It is
// pure: values in, values out, no I/O and no clock of its own.
package policy

// Kind is a stable snake_case failure kind (see docs/design.md).
type Kind string

// Failure kinds.
const (
	KindNone                Kind = ""
	KindRateLimited         Kind = "rate_limited"
	KindUsageLimited        Kind = "usage_limited"
	KindQuotaExhausted      Kind = "quota_exhausted"
	KindProviderUnavailable Kind = "provider_unavailable"
	KindNetwork             Kind = "network"
	KindWorkspaceSetup      Kind = "workspace_setup"
	KindInterrupted         Kind = "interrupted"
	KindAuthFailed          Kind = "auth_failed"
	KindConfigError         Kind = "config_error"
	KindInvalidInput        Kind = "invalid_input"
	KindContextExhausted    Kind = "context_exhausted"
	KindPermissionDenied    Kind = "permission_denied"
	KindRefused             Kind = "refused"
	// KindAgentBlocked: the agent itself said the card cannot go on as it
	// is (drover_block, with its own what/where/how).
	KindAgentBlocked  Kind = "agent_blocked"
	KindInputRequired Kind = "input_required"
	KindAgentFailed   Kind = "agent_failed"
	KindMaxTurns      Kind = "max_turns"
	KindTimeout       Kind = "timeout"
	KindStalled       Kind = "stalled"
	// KindVerifyFailed: the agent exited cleanly (or said it was done) but
	// the verify step's checks failed in its workspace.
	KindVerifyFailed Kind = "verify_failed"
	KindUnknown      Kind = "unknown"
	KindNoProgress   Kind = "no_progress"
	// KindRepeatedFailure is a block reason's kind (repeat.go): the same
	// failure again on a card with nothing changed; the runs keep the kind
	// they were classified as.
	KindRepeatedFailure Kind = "repeated_failure"
	KindCancelled       Kind = "cancelled"
	// KindSpendLimit: drover stopped the run because the card crossed
	// limits.max_cost_per_card_usd; the card is blocked until an operator acts.
	KindSpendLimit Kind = "spend_limit"
	// KindNoChange: a clean exit on a card with workspace.git that left
	// nothing on its branch (no commit, no change) when a change is
	// required; counted, retried, the next prompt told so.
	KindNoChange Kind = "no_changes"
	// KindPushRejected: drover's push of the card's branch was refused
	// because someone else pushed commits drover does not have; drover never
	// force-pushes, so the card is blocked for a human to merge.
	KindPushRejected Kind = "push_rejected"
	// KindCheckFailed: a check run on the head of the card's pull request
	// failed after drover's verified success (workspace.git.pull_request):
	// counted like verify_failed, the next prompt gets the check's name,
	// summary and link.
	KindCheckFailed Kind = "check_failed"
	// KindSucceeded is not a failure: the sim agent and classify use it for a clean run.
	KindSucceeded Kind = "succeeded"
)

// Kinds lists every failure kind in the order of docs/design.md's kind table.
var Kinds = []Kind{
	KindRateLimited, KindUsageLimited, KindQuotaExhausted, KindProviderUnavailable,
	KindNetwork, KindWorkspaceSetup, KindInterrupted, KindAuthFailed, KindConfigError,
	KindInvalidInput, KindContextExhausted, KindPermissionDenied, KindRefused,
	KindAgentBlocked, KindInputRequired, KindAgentFailed, KindMaxTurns, KindTimeout, KindStalled,
	KindVerifyFailed, KindUnknown, KindNoProgress, KindRepeatedFailure, KindCancelled, KindSpendLimit,
	KindNoChange, KindPushRejected, KindCheckFailed,
}

// Valid reports whether k is a known failure kind.
func (k Kind) Valid() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}
