package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

const healthColumns = `agent_id, skill_name, state, tools, last_error, last_error_at, last_call_at, updated_at, protocol_version`

// PutSkillHealth creates or replaces the skill's health and sets its
// UpdatedAt. Returns EINVALID if the skill does not exist. It does not bump
// the generation: health is not configuration.
func (s *Store) PutSkillHealth(ctx context.Context, h *mcpgate.SkillHealth) error {
	h.UpdatedAt = now()
	h.LastErrorAt, h.LastCallAt = normalizePtr(h.LastErrorAt), normalizePtr(h.LastCallAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO skill_health (`+healthColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (agent_id, skill_name) DO UPDATE
		SET state = excluded.state, tools = excluded.tools, last_error = excluded.last_error,
			last_error_at = excluded.last_error_at, last_call_at = excluded.last_call_at, updated_at = excluded.updated_at,
			protocol_version = excluded.protocol_version`,
		h.AgentID, h.Skill, h.State, h.Tools, h.LastError, nullMicros(h.LastErrorAt), nullMicros(h.LastCallAt), micros(h.UpdatedAt), h.ProtocolVersion)
	if s.d.Violation(err).Kind == ForeignKeyViolation {
		return mcpgate.Errorf(mcpgate.EINVALID, "agent %q has no skill %q", h.AgentID, h.Skill)
	} else if err != nil {
		return fmt.Errorf("put health of %s/%s: %w", h.AgentID, h.Skill, err)
	}
	return nil
}

// ListSkillHealth returns the health of an agent's skills, by skill name;
// agentID "" lists every agent's, by agent first.
func (s *Store) ListSkillHealth(ctx context.Context, agentID string) ([]*mcpgate.SkillHealth, error) {
	var w where
	w.equal("agent_id", agentID)
	rows, err := s.read.QueryContext(ctx, `SELECT `+healthColumns+` FROM skill_health`+w.String()+` ORDER BY agent_id, skill_name`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list skill health of %q: %w", agentID, err)
	}
	return collect(rows, scanHealth)
}

// scanHealth reads one row of healthColumns.
func scanHealth(row scanner) (*mcpgate.SkillHealth, error) {
	var h mcpgate.SkillHealth
	var errAt, callAt sql.NullInt64
	var updated int64
	if err := row.Scan(&h.AgentID, &h.Skill, &h.State, &h.Tools, &h.LastError, &errAt, &callAt, &updated, &h.ProtocolVersion); err != nil {
		return nil, err
	}
	h.LastErrorAt, h.LastCallAt, h.UpdatedAt = timePtr(errAt), timePtr(callAt), fromMicros(updated)
	return &h, nil
}
