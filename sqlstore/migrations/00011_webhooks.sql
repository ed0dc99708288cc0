-- +goose Up
-- Webhooks, the events they are told of, and the outbox: one delivery per
-- event and webhook, written with the event in one transaction, claimed by
-- a conditional UPDATE (next_at doubles as the claim's lease) so that one
-- replica attempts it at a time. Times are Unix microseconds.
CREATE TABLE webhooks (
    id            TEXT COLLATE "C" PRIMARY KEY,
    user_id       TEXT COLLATE "C" NOT NULL,
    url           TEXT NOT NULL,
    events        TEXT NOT NULL,
    sealed_secret TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX webhooks_user ON webhooks (user_id);

-- body is the exact JSON a delivery POSTs and signs.
CREATE TABLE webhook_events (
    id         TEXT COLLATE "C" PRIMARY KEY,
    type       TEXT COLLATE "C" NOT NULL,
    user_id    TEXT COLLATE "C" NOT NULL,
    agent_id   TEXT COLLATE "C" NOT NULL,
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE webhook_deliveries (
    id         TEXT COLLATE "C" PRIMARY KEY,
    webhook_id TEXT COLLATE "C" NOT NULL,
    event_id   TEXT COLLATE "C" NOT NULL,
    event_type TEXT COLLATE "C" NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL,
    next_at    BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    give_up_at BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, created_at);

CREATE TABLE webhook_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL,
    attempt     INTEGER NOT NULL,
    at          BIGINT NOT NULL,
    status      INTEGER NOT NULL,
    latency_ms  BIGINT NOT NULL,
    response    TEXT NOT NULL,
    error       TEXT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhooks;
