package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const sessionColumns = `id, agent_id, identity, protocol_version, client_name, client_version, client_capabilities,
	log_level, created_at, last_seen_at, ended_at`

// sessionByIDQuery is FindSession's query, which every MCP request runs: one
// primary-key lookup.
const sessionByIDQuery = `SELECT ` + sessionColumns + ` FROM sessions WHERE id = $1`

// CreateSession stores s, setting its CreatedAt and LastSeenAt when zero.
// Returns ECONFLICT if the ID exists and EINVALID if the ID is empty or the
// agent does not exist.
func (s *Store) CreateSession(ctx context.Context, ss *mcpgate.Session) error {
	if ss.ID == "" {
		return mcpgate.Errorf(mcpgate.EINVALID, "session id is required")
	}
	normalizeSessionTimes(ss)
	_, err := s.write.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		ss.ID, ss.AgentID, ss.Identity, ss.ProtocolVersion, ss.ClientName, ss.ClientVersion,
		nullString(string(ss.ClientCapabilities)), ss.LogLevel, micros(ss.CreatedAt), micros(ss.LastSeenAt), nullMicros(ss.EndedAt))
	switch s.d.Violation(err).Kind {
	case UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "session %q exists", ss.ID)
	case ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "session %q: agent %q does not exist", ss.ID, ss.AgentID)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", ss.ID, err)
	}
	return nil
}

// normalizeSessionTimes fills in the session's missing times and rounds all
// of them the way they are stored.
func normalizeSessionTimes(ss *mcpgate.Session) {
	t := now()
	if ss.CreatedAt.IsZero() {
		ss.CreatedAt = t
	}
	if ss.LastSeenAt.IsZero() {
		ss.LastSeenAt = ss.CreatedAt
	}
	ss.CreatedAt, ss.LastSeenAt = normalize(ss.CreatedAt), normalize(ss.LastSeenAt)
	ss.EndedAt = normalizePtr(ss.EndedAt)
}

// FindSession returns the session, ended or not; ENOTFOUND if unknown.
func (s *Store) FindSession(ctx context.Context, id string) (*mcpgate.Session, error) {
	ss, err := scanSession(s.queryRow(ctx, sessionByIDQuery, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "session %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find session %s: %w", id, err)
	}
	return ss, nil
}

// SetSessionLogLevel saves the session's log level. Returns ENOTFOUND
// if the session is unknown.
func (s *Store) SetSessionLogLevel(ctx context.Context, id, level string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET log_level = $2 WHERE id = $1`, id, level)
	if err != nil {
		return fmt.Errorf("set session %s log level: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "session %q not found", id))
}

// TouchSession records when the session was last used. Returns ENOTFOUND
// if unknown.
func (s *Store) TouchSession(ctx context.Context, id string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET last_seen_at = $2 WHERE id = $1`, id, micros(at))
	if err != nil {
		return fmt.Errorf("touch session %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "session %q not found", id))
}

// EndSession marks the session ended; ending an ended session keeps its
// first end time. Returns ENOTFOUND if unknown.
func (s *Store) EndSession(ctx context.Context, id string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET ended_at = COALESCE(ended_at, $2) WHERE id = $1`, id, micros(at))
	if err != nil {
		return fmt.Errorf("end session %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "session %q not found", id))
}

// DeleteSessions removes sessions last seen before the given time, and ended
// ones, returning how many went.
func (s *Store) DeleteSessions(ctx context.Context, lastSeenBefore time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM sessions WHERE last_seen_at < $1 OR ended_at IS NOT NULL`, micros(lastSeenBefore))
	if err != nil {
		return 0, fmt.Errorf("delete sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete sessions: rows affected: %w", err)
	}
	return int(n), nil
}

func scanSession(row scanner) (*mcpgate.Session, error) {
	var ss mcpgate.Session
	var caps sql.NullString
	var created, lastSeen int64
	var ended sql.NullInt64
	err := row.Scan(&ss.ID, &ss.AgentID, &ss.Identity, &ss.ProtocolVersion, &ss.ClientName, &ss.ClientVersion,
		&caps, &ss.LogLevel, &created, &lastSeen, &ended)
	if err != nil {
		return nil, err
	}
	if caps.Valid {
		ss.ClientCapabilities = []byte(caps.String)
	}
	ss.CreatedAt, ss.LastSeenAt, ss.EndedAt = fromMicros(created), fromMicros(lastSeen), timePtr(ended)
	return &ss, nil
}
