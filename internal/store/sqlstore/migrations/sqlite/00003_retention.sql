-- +goose Up
-- Retention finds finished runs by age without a scan of every run.
CREATE INDEX runs_finished ON runs (finished_at) WHERE outcome <> '';
CREATE INDEX runs_logged ON runs (finished_at) WHERE outcome <> '' AND log_path <> '';
-- …and settled notifications by age (pending ones are never pruned).
CREATE INDEX outbox_settled ON outbox (created_at) WHERE delivered_at IS NOT NULL OR dead <> 0;
-- The report of the latest garbage collection (one row).
CREATE TABLE gc_reports (
  id     INTEGER PRIMARY KEY,
  report TEXT NOT NULL
);

-- +goose Down
DROP TABLE gc_reports;
DROP INDEX outbox_settled;
DROP INDEX runs_logged;
DROP INDEX runs_finished;
