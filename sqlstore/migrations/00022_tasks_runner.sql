-- +goose Up
-- A runner's heartbeat (every few seconds, on every replica) finds the
-- runner's unfinished tasks directly. With no index on runner it read
-- every unfinished task of every runner (tasks_status_heartbeat) on
-- SQLite and on an analyzed PostgreSQL, and every task, kept until it
-- expires, in PostgreSQL's generic plan of a new database. The index is
-- partial on the heartbeat's condition: it holds the tasks running, and a
-- task leaves it when it ends.
CREATE INDEX tasks_runner_unfinished ON tasks (runner)
    WHERE status IN ('working', 'input_required');

-- +goose Down
DROP INDEX tasks_runner_unfinished;
