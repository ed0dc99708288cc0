package sqlstore

import (
	"context"
	"fmt"
)

// UnackedMessages returns, by agent, how many messages to its workers
// (chat_message and cancel) are not acknowledged yet: the depth of each
// agent's queue. Agents with none are left out. It reads the inbox index.
func (s *Store) UnackedMessages(ctx context.Context) (map[string]int, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT agent_id, COUNT(*) FROM messages
		WHERE acked_at IS NULL AND type IN ('chat_message', 'cancel') GROUP BY agent_id`)
	if err != nil {
		return nil, fmt.Errorf("count unacknowledged messages: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var agent string
		var n int
		if err := rows.Scan(&agent, &n); err != nil {
			return nil, fmt.Errorf("count unacknowledged messages: %w", err)
		}
		out[agent] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count unacknowledged messages: %w", err)
	}
	return out, nil
}
