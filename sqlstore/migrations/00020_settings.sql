-- +goose Up
-- Settings of the gateway itself that every process sharing the database
-- must agree on, such as the check of the secret key that seals stored
-- secrets. A setting is written once, by the first process to claim it.
-- Times are Unix microseconds.
CREATE TABLE settings (
    name       TEXT COLLATE "C" PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE settings;
