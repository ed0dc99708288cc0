-- +goose Up
-- An API key may expire: expires_at is Unix microseconds, NULL for a key
-- that never expires.
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN expires_at;
