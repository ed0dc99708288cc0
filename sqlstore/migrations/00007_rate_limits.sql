-- +goose Up
-- The token buckets of rate limits that replicas share: the tokens a bucket
-- held when last counted, and when it will be full again (a full bucket may
-- be deleted, since a missing one starts full). Times are Unix microseconds.
CREATE TABLE rate_buckets (
    bucket     TEXT COLLATE "C" PRIMARY KEY,
    tokens     DOUBLE PRECISION NOT NULL,
    counted_at BIGINT NOT NULL,
    full_at    BIGINT NOT NULL
);
CREATE INDEX rate_buckets_full_at ON rate_buckets (full_at);

-- +goose Down
DROP TABLE rate_buckets;
