-- +goose Up
-- The recent SSE events of every replica's streams, written behind the
-- sends in batches, so that a resumption (GET with Last-Event-ID) whose
-- stream's replica died finds them. A replica keeps per session what its
-- memory keeps (the latest 512 events / 2 MiB): each batch deletes the
-- session's events before the oldest it still holds; a sweep deletes the
-- rest by age. pos numbers a replica's events; times are Unix
-- microseconds.
CREATE TABLE stream_events (
    session_id TEXT COLLATE "C" NOT NULL,
    replica    TEXT COLLATE "C" NOT NULL,
    pos        BIGINT NOT NULL,
    stream_id  TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL,
    get_stream BOOLEAN NOT NULL,
    wire       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, replica, pos)
);
CREATE INDEX stream_events_age ON stream_events (created_at);

-- +goose Down
DROP TABLE stream_events;
