-- +goose Up
-- A finished run's failure fingerprint (policy.Fingerprint: the kind and a
-- hash of the normalised error; '' for a success or an open run), and the
-- basis it ran on (a JSON object of part → hash, set at claim; '' before
-- this version). A hold reads one profile's runs finished in a recent
-- window; the repeat cap compares a card's runs. And what the verify step
-- found after the agent's clean exit (a JSON object; '' when none ran).
ALTER TABLE runs ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN basis TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN verify TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_agent_finished ON runs (agent, finished_at);

-- +goose Down
DROP INDEX runs_agent_finished;
ALTER TABLE runs DROP COLUMN verify;
ALTER TABLE runs DROP COLUMN basis;
ALTER TABLE runs DROP COLUMN fingerprint;
