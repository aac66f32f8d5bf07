package policy

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
)

// Notification event names a Decision asks the dispatcher to send (through the
// outbox, once per card, run and outcome).
const (
	NotifyBlocked       = "blocked"
	NotifyGaveUp        = "gave_up"
	NotifyParked        = "parked"
	NotifyProfilePaused = "profile_paused"
)

// ident is the name operators type for a card: its identifier, else its id.
func ident(c board.Card) string {
	if c.Identifier != "" {
		return c.Identifier
	}
	if c.ID != "" {
		return c.ID
	}
	return "CARD"
}

func nonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// where names the run, its log and its workspace.
func where(card board.Card, run board.Run, logPath, workspace string) string {
	var p []string
	if run.ID != "" {
		if run.Attempt > 0 {
			p = append(p, fmt.Sprintf("run %s (attempt %d)", run.ID, run.Attempt))
		} else {
			p = append(p, "run "+run.ID)
		}
	}
	if l := nonEmpty(logPath, run.LogPath); l != "" {
		p = append(p, "log "+l)
	}
	if w := nonEmpty(workspace, run.Workspace); w != "" {
		p = append(p, "workspace "+w)
	}
	if len(p) == 0 {
		return "card " + ident(card)
	}
	return "card " + ident(card) + ", " + strings.Join(p, ", ")
}

// what is the kind with the provider's or validator's own words.
func what(k Kind, msg string) string {
	// One line, and short enough to read on a card: the whole text stays on
	// the run (its error and its log), which "where" names.
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return string(k) + ": (no message from the agent or provider)"
	}
	if r := []rune(msg); len(r) > maxWhat {
		msg = string(r[:maxWhat]) + "… (the run's log has the rest)"
	}
	return string(k) + ": " + msg
}

// maxWhat bounds the provider's or agent's message quoted in a reason.
const maxWhat = 600

// how is the exact way to continue after a block or give-up of kind k. Every
// answer names a drover command and ends with the resume that opens a new epoch.
func how(k Kind, id, profile, runID string) string {
	resume := "drover card resume " + id
	logs := "drover card show " + id
	if runID != "" {
		logs = "drover logs " + runID
	}
	prof := nonEmpty(profile, "PROFILE")
	switch k {
	case KindInvalidInput:
		return fmt.Sprintf("fix the card's input: drover card edit %s --spec-file FILE (or --body-file FILE), then %s", id, resume)
	case KindContextExhausted:
		return fmt.Sprintf("make the task smaller: drover card edit %s --body-file FILE (or split the card), then %s", id, resume)
	case KindPermissionDenied:
		return fmt.Sprintf("change the card (drover card edit %s …) or the permissions of agent profile %s in WORKFLOW.md, then %s", id, prof, resume)
	case KindRefused:
		return fmt.Sprintf("reword the task: drover card edit %s --body-file FILE, then %s", id, resume)
	case KindAgentBlocked:
		return fmt.Sprintf("do what the agent asks (it says where and how), change the card if needed (drover card edit %s …), then %s", id, resume)
	case KindNetwork:
		return fmt.Sprintf("check network access from this node (%s), then %s", logs, resume)
	case KindWorkspaceSetup:
		return fmt.Sprintf("fix the workspace hooks (hooks.after_create / hooks.before_run in WORKFLOW.md) or the workspace, see %s, then %s", logs, resume)
	case KindInterrupted:
		return fmt.Sprintf("the dispatcher kept stopping during this card: check drover's own log and %s, then %s", logs, resume)
	case KindProviderUnavailable:
		return fmt.Sprintf("the provider fails on this card only: read %s, change the card if it triggers the error (drover card edit %s …), then %s", logs, id, resume)
	case KindRateLimited, KindUsageLimited:
		return fmt.Sprintf("lower the load on agent profile %s (fewer concurrent cards) or wait for the limit to reset, then %s", prof, resume)
	case KindNoProgress:
		return fmt.Sprintf("the agent exits cleanly but never moves the card: read %s; if the work is done run drover card mv %s done, else change the card (drover card edit %s …) and %s", logs, id, id, resume)
	case KindPushRejected:
		return fmt.Sprintf("merge or rebase the card's branch yourself (drover never force-pushes), or delete the remote branch; then %s", resume)
	case KindNoChange:
		return fmt.Sprintf("the agent exits cleanly but leaves its branch as it was: read %s; if the card needs no change set spec.change_required: false (drover card edit %s --spec-file FILE), else make the card clearer; then %s", logs, id, resume)
	case KindSpendLimit:
		return fmt.Sprintf("raise limits.max_cost_per_card_usd in WORKFLOW.md or make the card smaller (drover card edit %s …), then %s", id, resume)
	case KindCancelled:
		return fmt.Sprintf("an operator cancelled the run: %s to run it again, or drover card cancel %s to drop it", resume, id)
	case KindAuthFailed, KindQuotaExhausted, KindConfigError:
		return fmt.Sprintf("fix agent profile %s, then drover agent resume %s and %s", prof, prof, resume)
	}
	return fmt.Sprintf("read %s, fix the cause (drover card edit %s … if the card is at fault), then %s for a fresh budget", logs, id, resume)
}

// providerScope says, in a provider_unavailable give-up, whether the card
// failed alone or in an outage the profile's breaker saw.
func providerScope(tripped bool, profile string) string {
	prof := nonEmpty(profile, "PROFILE")
	if tripped {
		return fmt.Sprintf("; agent profile %s's breaker opened for the same outage, so the provider was failing for other cards too", prof)
	}
	return fmt.Sprintf("; it fails on this card only (agent profile %s's breaker stayed closed)", prof)
}

// outageHow is how to continue after a provider_unavailable give-up during
// an outage: nothing about the card needs changing.
func outageHow(id, profile string) string {
	prof := nonEmpty(profile, "PROFILE")
	return fmt.Sprintf("the provider was down for every card of agent profile %s, not only this one: check its status (drover agent ls shows the breaker), and once it answers again run drover card resume %s", prof, id)
}

// credentialVarRe finds the credential variable a CLI says it lacks
// ("Missing environment variable: `OPENAI_API_KEY`.", "Please set
// `ANTHROPIC_API_KEY` in your environment vars").
var credentialVarRe = regexp.MustCompile(`\b[A-Z][A-Z0-9_]*_(?:API_KEY|TOKEN|KEY|SECRET)\b`)

// forbiddenRe tells a key the API knows but refuses (HTTP 403, a
// permission_error) from one it does not know: the fix is the key's access,
// not a new login.
var forbiddenRe = regexp.MustCompile(`(?i)\b403\b|\bforbidden\b|\bpermission_error\b|\bPERMISSION_DENIED\b|\bdoes not have (permission|access)\b|\bnot authorized to use\b|\bonly accepts requests from\b|\bcan only be used from within\b`)

// profileHow is how to continue after a profile pause; msg is the agent's
// or provider's message.
func profileHow(k Kind, profile, msg string) string {
	prof := nonEmpty(profile, "PROFILE")
	switch k {
	case KindAuthFailed:
		if forbiddenRe.MatchString(msg) {
			return fmt.Sprintf("the API key or account of agent profile %s is refused access (HTTP 403: the model, organisation, region or client is not allowed for it): give that key access or set another key in the profile's env, then drover agent resume %s", prof, prof)
		}
		if v := credentialVarRe.FindString(msg); v != "" {
			return fmt.Sprintf("set %s in drover's environment and pass it to the agent (agents.profiles.%s.env_passthrough in WORKFLOW.md, unless the kind passes it already), then drover agent resume %s", v, prof, prof)
		}
		return fmt.Sprintf("renew the credentials of agent profile %s (log in or set its API key), then drover agent resume %s", prof, prof)
	case KindQuotaExhausted:
		return fmt.Sprintf("add credit to the account of agent profile %s: drover's probe finds it (policy.quota_probe), or drover agent resume %s goes at once", prof, prof)
	}
	return fmt.Sprintf("fix agent profile %s in WORKFLOW.md (agents.profiles.%s), then drover agent resume %s", prof, prof, prof)
}

// clock prints at relative to now: 12:01:40 (in 40s); the date is added when
// the day differs.
func zone(t time.Time) string {
	name, _ := t.Zone()
	return name
}

func clock(at, now time.Time) string {
	at = at.In(now.Location())
	layout := "15:04:05"
	y1, m1, d1 := at.Date()
	if y2, m2, d2 := now.Date(); y1 != y2 || m1 != m2 || d1 != d2 {
		layout = "2006-01-02 15:04:05"
	}
	// No "(in 10s)": reasons are stored, and a relative time would be stale
	// by the time anyone reads it (explain and status compute their own).
	if at.Sub(now) <= 0 {
		return at.Format(layout) + " (now)"
	}
	return at.Format(layout) + " " + zone(at)
}

// short trims a message for a one-line explanation.
func short(s string) string { return excerpt.Line(s, 160) }
