-- +goose Up
-- Approvals: gated calls waiting for, or decided by, a reviewer. A
-- decision is one conditional UPDATE (WHERE state = 'pending'), so the
-- first wins on every replica. Times are Unix microseconds.
CREATE TABLE approvals (
    id              TEXT COLLATE "C" PRIMARY KEY,
    agent_id        TEXT COLLATE "C" NOT NULL,
    skill           TEXT COLLATE "C" NOT NULL,
    tool            TEXT COLLATE "C" NOT NULL,
    arguments       TEXT NOT NULL,
    args_hash       TEXT NOT NULL,
    identity        TEXT COLLATE "C" NOT NULL,
    user_id         TEXT COLLATE "C" NOT NULL,
    credential_kind TEXT NOT NULL,
    credential_id   TEXT COLLATE "C" NOT NULL,
    session_id      TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT COLLATE "C" NOT NULL,
    state           TEXT NOT NULL,
    requested_at    BIGINT NOT NULL,
    deadline        BIGINT NOT NULL,
    reviewer        TEXT COLLATE "C" NOT NULL,
    reason          TEXT NOT NULL,
    decided_at      BIGINT NOT NULL
);
CREATE INDEX approvals_state_deadline ON approvals (state, deadline);
CREATE INDEX approvals_agent_requested ON approvals (agent_id, requested_at);
CREATE INDEX approvals_key ON approvals (identity, agent_id, idempotency_key);

-- +goose Down
DROP TABLE approvals;
