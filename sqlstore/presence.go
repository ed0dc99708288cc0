package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// PutPresence records that replica has workers of the agent's skill ("" for
// all skills) connected until expires, and drops the agent's expired
// records, such as those of replicas that died. Returns ENOTFOUND if the
// agent does not exist.
func (s *Store) PutPresence(ctx context.Context, agentID, skill, replica string, expires time.Time) error {
	return s.withTx(ctx, func(tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `DELETE FROM agent_presence WHERE agent_id = $1 AND expires_at <= $2`, agentID, micros(now()))
		if err != nil {
			return fmt.Errorf("put presence of %s: %w", agentID, err)
		}
		_, err = tx.write.ExecContext(ctx, `INSERT INTO agent_presence (agent_id, skill, replica, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent_id, skill, replica) DO UPDATE SET expires_at = excluded.expires_at`,
			agentID, skill, replica, micros(expires))
		if s.d.Violation(err).Kind == ForeignKeyViolation {
			return mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", agentID)
		} else if err != nil {
			return fmt.Errorf("put presence of %s: %w", agentID, err)
		}
		return nil
	})
}

// DeletePresence removes replica's record of the agent's skill, if any.
func (s *Store) DeletePresence(ctx context.Context, agentID, skill, replica string) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM agent_presence WHERE agent_id = $1 AND skill = $2 AND replica = $3`,
		agentID, skill, replica)
	if err != nil {
		return fmt.Errorf("delete presence of %s: %w", agentID, err)
	}
	return nil
}

// Present reports whether a record of workers taking the agent's skill (a
// record of that skill or of all skills; of any skill when skill is "")
// expires after now.
func (s *Store) Present(ctx context.Context, agentID, skill string, now time.Time) (bool, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_presence
		WHERE agent_id = $1 AND ($2 = '' OR skill = $2 OR skill = '') AND expires_at > $3`,
		agentID, skill, micros(now)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("presence of %s: %w", agentID, err)
	}
	return n > 0, nil
}
