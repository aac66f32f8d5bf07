-- +goose Up
-- The agent's own session id (Claude Code's session_id, Codex's thread_id),
-- so the attempt after a human's answer can resume the same conversation.
ALTER TABLE runs ADD COLUMN session_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN session_id;
