-- +goose Up
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL
);
CREATE TABLE cards (
  id                TEXT PRIMARY KEY,
  identifier        TEXT NOT NULL UNIQUE,
  title             TEXT NOT NULL,
  body              TEXT NOT NULL DEFAULT '',
  state             TEXT NOT NULL,
  state_reason      TEXT NOT NULL DEFAULT '',
  priority          BIGINT NOT NULL DEFAULT 0,
  prio_order        BIGINT NOT NULL DEFAULT 5,
  labels            TEXT NOT NULL DEFAULT '[]',
  agent             TEXT NOT NULL DEFAULT '',
  spec              TEXT NOT NULL DEFAULT '{}',
  blocked_by        TEXT NOT NULL DEFAULT '[]',
  block_reason      TEXT,
  gave_up           TEXT,
  next_attempt_at   BIGINT,
  retry_epoch       BIGINT NOT NULL DEFAULT 1,
  claim_owner       TEXT,
  claim_epoch       BIGINT NOT NULL DEFAULT 0,
  claim_lease_until BIGINT,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  version           BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX cards_state_order ON cards (state, prio_order, created_at, id);
CREATE INDEX cards_claim ON cards (claim_lease_until) WHERE claim_owner IS NOT NULL;
CREATE INDEX cards_updated ON cards (updated_at);
CREATE INDEX cards_next ON cards (state, next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  card_id     TEXT NOT NULL REFERENCES cards(id),
  attempt     BIGINT NOT NULL,
  retry_epoch BIGINT NOT NULL,
  claim_epoch BIGINT NOT NULL,
  node        TEXT NOT NULL DEFAULT '',
  agent       TEXT NOT NULL DEFAULT '',
  outcome     TEXT NOT NULL DEFAULT '',
  kind        TEXT NOT NULL DEFAULT '',
  counted     BIGINT NOT NULL DEFAULT 0,
  decision    TEXT NOT NULL DEFAULT '',
  exit_code   BIGINT,
  error       TEXT NOT NULL DEFAULT '',
  claimed_at  BIGINT NOT NULL,
  started_at  BIGINT,
  finished_at BIGINT,
  tokens_in   BIGINT NOT NULL DEFAULT 0,
  tokens_out  BIGINT NOT NULL DEFAULT 0,
  cost_usd    DOUBLE PRECISION NOT NULL DEFAULT 0,
  log_path    TEXT NOT NULL DEFAULT '',
  workspace   TEXT NOT NULL DEFAULT '',
  last_output TEXT NOT NULL DEFAULT '',
  UNIQUE (card_id, retry_epoch, attempt)
);
CREATE INDEX runs_open ON runs (card_id) WHERE outcome = '';
CREATE INDEX runs_claimed ON runs (claimed_at);
CREATE TABLE events (
  seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      BIGINT NOT NULL,
  card_id TEXT NOT NULL DEFAULT '',
  run_id  TEXT NOT NULL DEFAULT '',
  type    TEXT NOT NULL,
  actor   TEXT NOT NULL DEFAULT '',
  reason  TEXT NOT NULL DEFAULT '',
  data    TEXT
);
CREATE INDEX events_card ON events (card_id, seq);
CREATE TABLE comments (
  id      TEXT PRIMARY KEY,
  card_id TEXT NOT NULL REFERENCES cards(id),
  author  TEXT NOT NULL,
  body    TEXT NOT NULL,
  at      BIGINT NOT NULL
);
CREATE INDEX comments_card ON comments (card_id, at);
CREATE TABLE outbox (
  id           TEXT PRIMARY KEY,
  key          TEXT NOT NULL UNIQUE,
  channel      TEXT NOT NULL,
  event        TEXT NOT NULL,
  card_id      TEXT NOT NULL DEFAULT '',
  run_id       TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  attempts     BIGINT NOT NULL DEFAULT 0,
  next_at      BIGINT NOT NULL,
  delivered_at BIGINT,
  last_error   TEXT NOT NULL DEFAULT '',
  dead         BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX outbox_due ON outbox (next_at) WHERE delivered_at IS NULL AND dead = 0;
CREATE TABLE agent_states (
  name       TEXT PRIMARY KEY,
  state      TEXT NOT NULL,
  kind       TEXT NOT NULL DEFAULT '',
  reason     TEXT NOT NULL DEFAULT '',
  until      BIGINT,
  data       TEXT,
  updated_at BIGINT NOT NULL,
  version    BIGINT NOT NULL DEFAULT 1
);
CREATE TABLE nodes (
  name       TEXT PRIMARY KEY,
  pid        BIGINT NOT NULL DEFAULT 0,
  started_at BIGINT NOT NULL,
  seen_at    BIGINT NOT NULL,
  running    BIGINT NOT NULL DEFAULT 0,
  last_tick  BIGINT,
  status     TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE leader (
  id         BIGINT PRIMARY KEY,
  node       TEXT NOT NULL,
  lease_until BIGINT NOT NULL
);

-- +goose Down
DROP TABLE leader;
DROP TABLE nodes;
DROP TABLE agent_states;
DROP TABLE outbox;
DROP TABLE comments;
DROP TABLE events;
DROP TABLE runs;
DROP TABLE cards;
DROP TABLE counters;
