package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

const agentColumns = `id, name, description, owner_id, mcp_enabled, source, created_at, updated_at`

// CreateAgent stores a, setting its timestamps. Returns ECONFLICT if the ID
// is taken and EINVALID if the owner does not exist.
func (s *Store) CreateAgent(ctx context.Context, a *mcpgate.Agent) error {
	a.CreatedAt = now()
	a.UpdatedAt = a.CreatedAt
	return s.withTx(ctx, func(tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			a.ID, a.Name, a.Description, a.OwnerID, a.MCPEnabled, a.Source, micros(a.CreatedAt), micros(a.UpdatedAt))
		if err != nil {
			return tx.agentWriteError(err, a)
		}
		return tx.bumpGeneration(ctx)
	})
}

// UpdateAgent saves a's name, description, owner, mcp_enabled and source,
// and sets its UpdatedAt. Returns ENOTFOUND if it does not exist and
// EINVALID if the new owner does not.
func (s *Store) UpdateAgent(ctx context.Context, a *mcpgate.Agent) error {
	updated := now()
	return s.withTx(ctx, func(tx *Store) error {
		var created int64
		err := tx.write.QueryRowContext(ctx, `UPDATE agents SET name = $2, description = $3, owner_id = $4, mcp_enabled = $5,
			source = $6, updated_at = $7 WHERE id = $1 RETURNING created_at`,
			a.ID, a.Name, a.Description, a.OwnerID, a.MCPEnabled, a.Source, micros(updated)).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", a.ID)
		} else if err != nil {
			return tx.agentWriteError(err, a)
		}
		a.CreatedAt, a.UpdatedAt = fromMicros(created), updated
		return tx.bumpGeneration(ctx)
	})
}

// agentWriteError maps a failed write of a to the error a user sees.
func (s *Store) agentWriteError(err error, a *mcpgate.Agent) error {
	switch s.d.Violation(err).Kind {
	case UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "agent %q exists", a.ID)
	case ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "agent %q: owner %q does not exist", a.ID, a.OwnerID)
	}
	return fmt.Errorf("write agent %s: %w", a.ID, err)
}

// FindAgent returns ENOTFOUND if there is no such agent.
func (s *Store) FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error) {
	a, err := scanAgent(s.queryRow(ctx, `SELECT `+agentColumns+` FROM agents WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find agent %s: %w", id, err)
	}
	return a, nil
}

// ListAgents returns the matching agents ordered by ID.
func (s *Store) ListAgents(ctx context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error) {
	var w where
	w.equal("owner_id", f.OwnerID)
	rows, err := s.read.QueryContext(ctx, `SELECT `+agentColumns+` FROM agents`+w.String()+` ORDER BY id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return collect(rows, scanAgent)
}

// DeleteAgent removes the agent with its skills, tools, agent keys and
// sessions, which the schema cascades to. Returns ENOTFOUND if it does not
// exist.
func (s *Store) DeleteAgent(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *Store) error {
		err := tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", id), `DELETE FROM agents WHERE id = $1`, id)
		if err != nil {
			return err
		}
		tx.inbox.forget() // the agent's channels and messages went with it
		return tx.bumpGeneration(ctx)
	})
}

func scanAgent(row scanner) (*mcpgate.Agent, error) {
	var a mcpgate.Agent
	var created, updated int64
	err := row.Scan(&a.ID, &a.Name, &a.Description, &a.OwnerID, &a.MCPEnabled, &a.Source, &created, &updated)
	if err != nil {
		return nil, err
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &a, nil
}
