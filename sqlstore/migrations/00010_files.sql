-- +goose Up
-- Uploaded files' metadata; their bytes are in a blob store, keyed by
-- sha256. Times are Unix microseconds (BIGINT).

-- files has no foreign key to users: a deleted user's files are swept.
CREATE TABLE files (
    id           TEXT COLLATE "C" PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL,
    filename     TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    sha256       TEXT COLLATE "C" NOT NULL,
    status       TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX files_user ON files (user_id);
CREATE INDEX files_expires_at ON files (status, expires_at);
CREATE INDEX files_sha256 ON files (sha256);

-- +goose Down
DROP TABLE files;
