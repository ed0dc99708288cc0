package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// PutPeerMessage stores m, setting its ID and CreatedAt.
func (s *Store) PutPeerMessage(ctx context.Context, m *mcpgate.PeerMessage) error {
	m.ID, m.CreatedAt = mcpgate.NewID("pm_"), now()
	_, err := s.write.ExecContext(ctx, `INSERT INTO peer_messages (id, from_replica, to_replica, body, created_at)
		VALUES ($1, $2, $3, $4, $5)`, m.ID, m.From, m.To, string(m.Body), micros(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("put peer message to %q: %w", m.To, err)
	}
	return nil
}

// PeerMessages returns the messages to replica to and to every replica
// created at or after since, oldest first.
func (s *Store) PeerMessages(ctx context.Context, to string, since time.Time) ([]*mcpgate.PeerMessage, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, from_replica, to_replica, body, created_at FROM peer_messages
		WHERE to_replica IN ($1, '') AND created_at >= $2 ORDER BY created_at, id`, to, micros(since))
	if err != nil {
		return nil, fmt.Errorf("peer messages to %q: %w", to, err)
	}
	defer rows.Close()
	var out []*mcpgate.PeerMessage
	for rows.Next() {
		m := &mcpgate.PeerMessage{}
		var body string
		var at int64
		if err := rows.Scan(&m.ID, &m.From, &m.To, &body, &at); err != nil {
			return nil, fmt.Errorf("peer messages to %q: %w", to, err)
		}
		m.Body, m.CreatedAt = []byte(body), fromMicros(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("peer messages to %q: %w", to, err)
	}
	return out, nil
}

// DeletePeerMessages deletes the messages created before before.
func (s *Store) DeletePeerMessages(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM peer_messages WHERE created_at < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("delete peer messages: %w", err)
	}
	return res.RowsAffected()
}
