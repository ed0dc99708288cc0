-- +goose Up
-- Tasks: tools/calls run in the background. A task ends by one
-- conditional UPDATE (WHERE status is not terminal), so the first end wins
-- on every replica and a cancelled task stays cancelled. runner and
-- heartbeat_at say which process runs an unfinished task and when it last
-- said so. Times are Unix microseconds; ttl_ms is milliseconds.
CREATE TABLE tasks (
    id              TEXT COLLATE "C" PRIMARY KEY,
    agent_id        TEXT COLLATE "C" NOT NULL,
    tool            TEXT COLLATE "C" NOT NULL,
    identity        TEXT COLLATE "C" NOT NULL,
    user_id         TEXT COLLATE "C" NOT NULL,
    credential_kind TEXT NOT NULL,
    credential_id   TEXT COLLATE "C" NOT NULL,
    session_id      TEXT COLLATE "C" NOT NULL,
    args_hash       TEXT NOT NULL,
    idempotency_key TEXT COLLATE "C" NOT NULL,
    status          TEXT NOT NULL,
    status_message  TEXT NOT NULL,
    result          TEXT,
    error_code      TEXT NOT NULL,
    error           TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    ttl_ms          BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    runner          TEXT COLLATE "C" NOT NULL,
    heartbeat_at    BIGINT NOT NULL
);
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_agent_created ON tasks (agent_id, created_at);
CREATE INDEX tasks_identity_created ON tasks (identity, created_at);
CREATE INDEX tasks_status_heartbeat ON tasks (status, heartbeat_at);
CREATE INDEX tasks_expires ON tasks (expires_at);
CREATE INDEX tasks_key ON tasks (identity, agent_id, idempotency_key);

-- +goose Down
DROP TABLE tasks;
