-- +goose Up
-- The file sweep finds ready files past the retention by creation time.
CREATE INDEX files_created_at ON files (status, created_at);

-- +goose Down
DROP INDEX files_created_at;
