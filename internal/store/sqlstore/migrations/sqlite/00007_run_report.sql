-- +goose Up
-- What the agent itself reported about how its run ends (drover mcp's
-- drover_block, drover_ask_human or drover_done), as a JSON object; '' when
-- it reported nothing. Written once per run, only while the run is open.
ALTER TABLE runs ADD COLUMN report TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN report;
