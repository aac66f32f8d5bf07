-- +goose Up
-- A node name is held by one process at a time: the random id of the
-- holder and when its hold lapses unless renewed (TouchNode).
ALTER TABLE nodes ADD COLUMN instance TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE nodes DROP COLUMN lease_until;
ALTER TABLE nodes DROP COLUMN instance;
