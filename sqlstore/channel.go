package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

const channelColumns = `id, agent_id, skill, owner, session_id, created_at`

// CreateChannel stores c, setting its ID when empty and its CreatedAt when
// zero. Returns ECONFLICT if the ID exists and EINVALID if the agent does
// not.
func (s *Store) CreateChannel(ctx context.Context, c *mcpgate.Channel) error {
	if c.ID == "" {
		c.ID = mcpgate.NewID("ch_")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	c.CreatedAt = normalize(c.CreatedAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO channels (`+channelColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.AgentID, c.Skill, c.Owner, nullString(c.SessionID), micros(c.CreatedAt))
	switch s.d.Violation(err).Kind {
	case UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "channel %q exists", c.ID)
	case ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "channel %q: agent %q does not exist", c.ID, c.AgentID)
	}
	if err != nil {
		return fmt.Errorf("create channel %s: %w", c.ID, err)
	}
	return nil
}

// FindChannel returns ENOTFOUND if there is no such channel.
func (s *Store) FindChannel(ctx context.Context, id string) (*mcpgate.Channel, error) {
	c, err := scanChannel(s.read.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "channel %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find channel %s: %w", id, err)
	}
	return c, nil
}

func scanChannel(row scanner) (*mcpgate.Channel, error) {
	var c mcpgate.Channel
	var session sql.NullString
	var created int64
	if err := row.Scan(&c.ID, &c.AgentID, &c.Skill, &c.Owner, &session, &created); err != nil {
		return nil, err
	}
	c.SessionID, c.CreatedAt = session.String, fromMicros(created)
	return &c, nil
}
