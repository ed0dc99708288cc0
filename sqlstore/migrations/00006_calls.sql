-- +goose Up
-- The audit log (one row per tools/call) and idempotency keys.
-- Times are Unix microseconds (BIGINT); identifiers use the "C" collation.

-- calls has no foreign keys: the log outlives deleted agents and users.
CREATE TABLE calls (
    id              TEXT COLLATE "C" PRIMARY KEY,
    at              BIGINT NOT NULL,
    credential_kind TEXT NOT NULL,
    credential_id   TEXT COLLATE "C" NOT NULL,
    user_id         TEXT COLLATE "C" NOT NULL,
    agent_id        TEXT COLLATE "C" NOT NULL,
    skill           TEXT COLLATE "C" NOT NULL,
    tool            TEXT COLLATE "C" NOT NULL,
    args_hash       TEXT NOT NULL,
    arguments       TEXT,
    outcome         TEXT NOT NULL,
    duration_us     BIGINT NOT NULL,
    result_bytes    BIGINT NOT NULL,
    session_id      TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT NOT NULL,
    error           TEXT NOT NULL
);
-- Listings go newest first, paged by (at, id).
CREATE INDEX calls_at ON calls (at, id);
CREATE INDEX calls_agent_at ON calls (agent_id, at);

-- idempotency holds one row per key in the scope of a caller identity and
-- an agent; its primary key is what makes a claim win exactly once, on any
-- replica. result is NULL while the call runs.
CREATE TABLE idempotency (
    identity   TEXT COLLATE "C" NOT NULL,
    agent_id   TEXT COLLATE "C" NOT NULL,
    key        TEXT COLLATE "C" NOT NULL,
    token      TEXT COLLATE "C" NOT NULL,
    hash       TEXT NOT NULL,
    result     TEXT,
    claimed_at BIGINT NOT NULL,
    stale_at   BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (identity, agent_id, key)
);
CREATE INDEX idempotency_expires_at ON idempotency (expires_at);

-- +goose Down
DROP TABLE idempotency;
DROP TABLE calls;
