-- +goose Up
-- Two periodic sweeps read every row of their tables, on SQLite and on
-- an analyzed PostgreSQL alike, since no index led to the rows they
-- delete. Each of their three statements now finds its rows through an
-- index.
--
-- The file sweep's files that never became ready, by expiry. The index is
-- partial on the sweep's own condition (status <> 'ready', a literal in
-- the statement, so that both engines see it implies the index's); ready
-- files go by files_created_at.
CREATE INDEX files_unready_expires_at ON files (expires_at) WHERE status <> 'ready';
-- The webhook retention sweep's finished deliveries, oldest first: a
-- delivery enters the index once it is no longer pending.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE state <> 'pending';
-- The same sweep's events: old ones, each kept while a delivery names it.
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- +goose Down
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_events_created_at;
DROP INDEX webhook_deliveries_finished;
DROP INDEX files_unready_expires_at;
