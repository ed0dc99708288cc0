package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate"
)

// claimQuery marks the oldest claimable messages of an agent's inbox
// delivered and returns them. The outer WHERE repeats the conditions, so
// that each row is checked again when it is updated.
const claimQuery = `UPDATE messages SET delivered_at = $1, attempts = attempts + 1
	WHERE id IN (SELECT id FROM messages
		WHERE agent_id = $2 AND acked_at IS NULL AND type IN ('chat_message', 'cancel')
		AND (delivered_at IS NULL OR delivered_at <= $3) AND ($4 = '' OR skill = $4)
		ORDER BY seq LIMIT $5)
	AND acked_at IS NULL AND (delivered_at IS NULL OR delivered_at <= $3)
	RETURNING ` + messageColumns

// ClaimMessages returns up to limit messages for the agent's workers
// (chat_message and cancel, of one skill or of all when skill is "") that
// are neither acknowledged nor delivered after now-visibility, oldest
// first, and marks them delivered at now, counting the attempt.
//
// Concurrent claims of one agent take turns: each first locks the agent's
// seq counter, as posts do. They never return the same message, and on
// PostgreSQL two claims cannot deadlock by locking the same rows in
// different orders, nor a claim and a reply that acknowledges a message,
// since both take the counter first.
func (s *Store) ClaimMessages(ctx context.Context, agentID, skill string, now time.Time, visibility time.Duration, limit int) ([]*mcpgate.Message, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var msgs []*mcpgate.Message
	err := s.withTx(ctx, func(tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `UPDATE message_seqs SET seq = seq WHERE agent_id = $1`, agentID)
		if err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		rows, err := tx.write.QueryContext(ctx, claimQuery, micros(now), agentID, micros(now.Add(-visibility)), skill, limit)
		if err != nil {
			return err
		}
		msgs, err = collect(rows, scanMessage)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim messages of %s: %w", agentID, err)
	}
	slices.SortFunc(msgs, func(a, b *mcpgate.Message) int { return cmp.Compare(a.Seq, b.Seq) })
	return msgs, nil
}

// AckMessage marks a message to the agent's workers acknowledged, keeping
// the first acknowledgement's time. Returns ENOTFOUND if the agent has no
// such message.
func (s *Store) AckMessage(ctx context.Context, agentID, id string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE messages SET acked_at = COALESCE(acked_at, $3)
		WHERE id = $1 AND agent_id = $2 AND type IN ('chat_message', 'cancel')`, id, agentID, micros(now()))
	if err != nil {
		return fmt.Errorf("ack message %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q has no message %q", agentID, id))
}

// ack marks the message id acknowledged at t, unless it is already.
func (s *Store) ack(ctx context.Context, id string, t time.Time) error {
	_, err := s.write.ExecContext(ctx, `UPDATE messages SET acked_at = COALESCE(acked_at, $2) WHERE id = $1`, id, micros(t))
	if err != nil {
		return fmt.Errorf("ack message %s: %w", id, err)
	}
	return nil
}
