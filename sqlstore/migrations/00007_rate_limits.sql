-- +goose Up
-- The token buckets of rate limits that replicas share, each kept as one
-- instant (the generic cell rate algorithm's theoretical arrival time, in
-- Unix nanoseconds): the bucket is full once tat is past, and may then be
-- deleted, since a missing bucket starts full. taken is what the last
-- take got, for the statement that takes to return it.
CREATE TABLE rate_buckets (
    bucket TEXT COLLATE "C" PRIMARY KEY,
    tat    BIGINT NOT NULL,
    taken  BIGINT NOT NULL
);
CREATE INDEX rate_buckets_tat ON rate_buckets (tat);

-- +goose Down
DROP TABLE rate_buckets;
