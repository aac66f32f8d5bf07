-- +goose Up
-- A card mirrored from an external tracker (GitHub Issues, Linear) carries
-- the issue it mirrors: external_key is "<tracker>:<issue id>" ('' for a
-- card of drover's own board), unique so two processes syncing at once
-- create one card per issue; external is the link as JSON
-- ({tracker, id, key, url}) or NULL.
ALTER TABLE cards ADD COLUMN external_key TEXT NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN external TEXT;
CREATE UNIQUE INDEX cards_external_key ON cards (external_key) WHERE external_key <> '';

-- +goose Down
DROP INDEX cards_external_key;
ALTER TABLE cards DROP COLUMN external;
ALTER TABLE cards DROP COLUMN external_key;
