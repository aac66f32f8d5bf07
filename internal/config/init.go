package config

import "github.com/drover-dev/drover/internal/prompt"

// InitTemplate is the WORKFLOW.md that `drover init` writes: every section
// with its defaults, commented. It parses cleanly as is.
const InitTemplate = `---
# drover WORKFLOW.md: settings (YAML, between the --- lines), then the prompt
# template (Liquid) that each agent run receives.
# Durations are Go-style strings: 250ms, 10s, 5m, 1h. Values may use $VAR or
# ${VAR} to read the environment (hooks are shell scripts and are left as is).

# The board: ordered columns, each with a role. Roles: inactive, eligible
# (agents pick cards from here), running, parked (waiting for a human answer),
# completed (e.g. review), blocked, done, cancelled. blocked, done and
# cancelled are sinks: only an operator moves a card out of them.
board:
  prefix: DRV                     # card identifiers: DRV-1, DRV-2, ...
  columns:
    - {name: backlog, role: inactive}
    - {name: ready, role: eligible}
    - {name: in_progress, role: running}
    - {name: awaiting_input, role: parked}
    - {name: review, role: completed}
    - {name: done, role: done}
    - {name: blocked, role: blocked}
    - {name: cancelled, role: cancelled}

# Agent profiles. A card names one with --agent; otherwise the default runs.
agents:
  default: sim
  profiles:
    # The built-in simulated agent: plays the kinds listed in a card's
    # spec.sim, e.g. --spec '{"sim": ["network", "succeeded"]}'.
    sim: {kind: sim}
    # Claude Code:
    # claude:
    #   kind: claude
    #   command: claude
    #   args: [--model, claude-sonnet-4-5]  # added after drover's -p --output-format stream-json --verbose
    #   env_passthrough: [MY_PROXY_TOKEN]   # beyond ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, … (README: What an agent runs with)
    #   timeout: 1h                 # total time per run
    #   stall_timeout: 5m           # no output for this long stops the run
    #   resume: auto                # after an answer, go on in the same session (never: a new one)
    # Any program; the prompt arrives on stdin (or prompt: file | arg):
    # script:
    #   kind: command
    #   command: ./agent.sh
    #   prompt: stdin
    #   env: {API_TOKEN: $API_TOKEN}
    #   spec_schema:                # cards for this profile must match it
    #     type: object
    #     required: [plan]
    #     properties: {plan: {type: string}}
    #   match:                      # classification overrides, tried first
    #     - {name: tests_failed, regex: "FAIL:", kind: agent_failed}

# What happens when a run fails. Nothing retries without a bound.
policy:
  max_attempts: 10                # counted attempts per card; -1 = unbounded
  failed_state: blocked           # where a card goes when a budget runs out
  backoff: {base: 10s, max: 5m, jitter: 0.1}
  release_churn_cap: 5            # releases in a row without a start, then block
  continuation_cap: 3             # clean exits while still eligible, then block
  breaker: {threshold: 5, window: 5m, cooldown: 1m}
  kinds:                          # per failure kind: cap, tiers or backoff
    network: {cap: 3, tiers: [1m, 5m, 15m]}
    workspace_setup: {cap: 3}
    interrupted: {cap: 3, tiers: [0s]}
    provider_unavailable: {cap: 10}
    rate_limited: {cap: 5}

# Spend caps in USD; 0 = off. A run starts only if its estimate fits under
# the day cap (runs in flight reserve theirs); over a card's cap that card
# is blocked.
limits:
  max_cost_per_day_usd: 0
  max_cost_per_card_usd: 0
  estimated_cost_per_run_usd: 0   # 0 = the average of recent runs
  day_boundary: "00:00 UTC"       # HH:MM and a zone, e.g. "06:00 Europe/Berlin"

# Notifications (off until a URL is set).
# notify:
#   slack: {url: $SLACK_WEBHOOK_URL, events: [blocked, gave_up, parked, profile_paused]}
#   webhook: {url: $DROVER_WEBHOOK_URL, secret: $DROVER_WEBHOOK_SECRET}

# Each card runs in its own directory under root (relative to this file).
workspace:
  root: .drover/workspaces
  cleanup: on_done                # never | on_done | on_sink (done, blocked or cancelled)

# Shell scripts run in the workspace (Symphony-compatible).
hooks:
  timeout: 60s
  # after_create: |
  #   git clone --depth 1 "$REPO_URL" .
  # before_run: git pull --ff-only
  # after_run: ""
  # before_remove: ""

dispatch:
  node: ""                        # default: the hostname
  lease: 30s                      # claim lease; heartbeat at a third of it
  poll_interval: 5s
  max_concurrent: 4               # agent runs at once on this node
  # max_concurrent_by_state: {ready: 2}

# store: sqlite:.drover/drover.db   # or postgres://user@host/db (default: beside this file)

# How long history is kept (0 or forever: keep). Open runs, each card's latest
# run and undelivered notifications are never pruned; drover gc --dry-run shows
# what would go.
retention:
  events: 90d                     # events, and delivered or dead notifications
  runs: 180d                      # finished runs, with their logs
  logs: 30d                       # run log files (the run rows stay)

# Dashboard and API; port 0 turns it off.
server:
  host: 127.0.0.1
  port: 4840
  # auth_token: $DROVER_TOKEN
---
` + prompt.DefaultPrompt
