-- +goose Up
-- What a run ran: its argument vector (secrets redacted) and the names,
-- never the values, of the environment variables it was given, as JSON
-- arrays of strings.
ALTER TABLE runs ADD COLUMN argv TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN env_names TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE runs DROP COLUMN env_names;
ALTER TABLE runs DROP COLUMN argv;
