-- +goose Up
-- The pull request of a card's branch (workspace.git.pull_requests): a JSON
-- object (board.PullRequest: number, url, branch, state, head_sha,
-- checked_at, etag, handled); NULL when the card has none.
ALTER TABLE cards ADD COLUMN pull_request TEXT;

-- +goose Down
ALTER TABLE cards DROP COLUMN pull_request;
