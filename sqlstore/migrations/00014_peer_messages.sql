-- +goose Up
-- Messages between the replicas' MCP transports (answers to server→client
-- requests, cancellations, notifications, resumed streams' events), kept
-- for minutes: receivers read them by recipient and time, and a sweep
-- deletes them by age. to_replica '' is every replica. Times are Unix
-- microseconds.
CREATE TABLE peer_messages (
    id           TEXT COLLATE "C" PRIMARY KEY,
    from_replica TEXT COLLATE "C" NOT NULL,
    to_replica   TEXT COLLATE "C" NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX peer_messages_to ON peer_messages (to_replica, created_at);
CREATE INDEX peer_messages_age ON peer_messages (created_at);

-- +goose Down
DROP TABLE peer_messages;
