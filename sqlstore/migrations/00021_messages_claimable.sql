-- +goose Up
-- On SQLite, the agent's inbox indexed by when each message was
-- delivered: the claimable ones (never delivered, or delivered before
-- the visibility timeout) are found directly. messages_inbox kept them in
-- seq order among every message not acknowledged yet, so that finding
-- them, on every post to the agent's workers and every claim, walked all
-- the calls in flight.
-- PostgreSQL keeps messages_inbox: there every message is claimed (no
-- handoff), and an index on delivered_at would make each claim's update
-- of it write a new entry in every index of the row (no HOT update).
-- +mcpgate sqlite
CREATE INDEX messages_claimable ON messages (agent_id, delivered_at, seq)
    WHERE acked_at IS NULL AND type IN ('chat_message', 'cancel');
DROP INDEX messages_inbox;
-- +mcpgate end

-- +goose Down
-- +mcpgate sqlite
CREATE INDEX messages_inbox ON messages (agent_id, seq)
    WHERE acked_at IS NULL AND type IN ('chat_message', 'cancel');
DROP INDEX messages_claimable;
-- +mcpgate end
