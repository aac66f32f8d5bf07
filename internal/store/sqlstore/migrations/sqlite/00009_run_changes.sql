-- +goose Up
-- What a run did to its card's git branch (workspace.git): a JSON object
-- (board.Changes: branch, base, head, commits, files, insertions,
-- deletions, dirty, committed_by, pushed); '' for a workflow without git or
-- a run that did not get that far.
ALTER TABLE runs ADD COLUMN changes TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN changes;
