-- +goose Up
-- No query looks messages up by in_reply_to but for a final reply, which
-- messages_final_reply serves; the index cost every reply, delta and cancel
-- one more B-tree write.
DROP INDEX messages_in_reply_to;

-- +goose Down
CREATE INDEX messages_in_reply_to ON messages (in_reply_to) WHERE in_reply_to IS NOT NULL;
