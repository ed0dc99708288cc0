package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpgate/mcpgate"
)

const skillColumns = `agent_id, name, kind, spec, source, created_at, updated_at`

// PutSkill creates the skill or replaces it and its tools, atomically, and
// sets s's timestamps. Putting a skill equal to the stored one (settings,
// source and tools) changes nothing, not even its UpdatedAt or the
// generation. A new skill goes after the agent's others; a replaced one
// keeps its place. Returns EINVALID if the agent does not exist or a tool is
// missing or declared twice.
func (s *Store) PutSkill(ctx context.Context, sk *mcpgate.Skill) error {
	enc, err := encodeSkill(sk)
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *Store) error {
		old, err := tx.storedSkill(ctx, sk.AgentID, sk.Name)
		if err != nil {
			return err
		}
		if old != nil && old.equal(enc) {
			sk.CreatedAt, sk.UpdatedAt = old.createdAt, old.updatedAt
			return nil
		}
		return tx.writeSkill(ctx, sk, enc)
	})
}

// writeSkill upserts the skill's row, replaces its tools and bumps the
// generation.
func (s *Store) writeSkill(ctx context.Context, sk *mcpgate.Skill, enc *encodedSkill) error {
	updated := now()
	var created int64
	err := s.write.QueryRowContext(ctx, `INSERT INTO skills (agent_id, name, kind, position, spec, source, created_at, updated_at)
		VALUES ($1, $2, $3, (SELECT COALESCE(MAX(position), 0) + 1 FROM skills WHERE agent_id = $1), $4, $5, $6, $6)
		ON CONFLICT (agent_id, name) DO UPDATE
		SET kind = excluded.kind, spec = excluded.spec, source = excluded.source, updated_at = excluded.updated_at
		RETURNING created_at`,
		sk.AgentID, sk.Name, enc.kind, enc.spec, enc.source, micros(updated)).Scan(&created)
	if s.d.Violation(err).Kind == ForeignKeyViolation {
		return mcpgate.Errorf(mcpgate.EINVALID, "skill %q: agent %q does not exist", sk.Name, sk.AgentID)
	} else if err != nil {
		return fmt.Errorf("put skill %s/%s: %w", sk.AgentID, sk.Name, err)
	}
	if err := s.replaceTools(ctx, sk, enc.tools); err != nil {
		return err
	}
	sk.CreatedAt, sk.UpdatedAt = fromMicros(created), updated
	return s.bumpGeneration(ctx)
}

// replaceTools deletes the skill's stored tools and inserts the new ones in
// their declared order.
func (s *Store) replaceTools(ctx context.Context, sk *mcpgate.Skill, specs []string) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM tools WHERE agent_id = $1 AND skill_name = $2`, sk.AgentID, sk.Name)
	if err != nil {
		return fmt.Errorf("delete tools of %s/%s: %w", sk.AgentID, sk.Name, err)
	}
	for i, spec := range specs {
		_, err := s.write.ExecContext(ctx, `INSERT INTO tools (agent_id, skill_name, position, name, spec) VALUES ($1, $2, $3, $4, $5)`,
			sk.AgentID, sk.Name, i, sk.Tools[i].Name, spec)
		if err != nil {
			return fmt.Errorf("insert tool %s of %s/%s: %w", sk.Tools[i].Name, sk.AgentID, sk.Name, err)
		}
	}
	return nil
}

// storedSkill reads a skill's stored encoding, or nil when there is none.
func (s *Store) storedSkill(ctx context.Context, agentID, name string) (*encodedSkill, error) {
	var e encodedSkill
	var created, updated int64
	err := s.read.QueryRowContext(ctx, `SELECT kind, spec, source, created_at, updated_at FROM skills WHERE agent_id = $1 AND name = $2`,
		agentID, name).Scan(&e.kind, &e.spec, &e.source, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read skill %s/%s: %w", agentID, name, err)
	}
	e.createdAt, e.updatedAt = fromMicros(created), fromMicros(updated)
	rows, err := s.read.QueryContext(ctx, `SELECT spec FROM tools WHERE agent_id = $1 AND skill_name = $2 ORDER BY position`, agentID, name)
	if err != nil {
		return nil, fmt.Errorf("read tools of %s/%s: %w", agentID, name, err)
	}
	e.tools, err = collect(rows, func(row scanner) (spec string, err error) { return spec, row.Scan(&spec) })
	return &e, err
}

// FindSkill returns ENOTFOUND if the agent has no such skill.
func (s *Store) FindSkill(ctx context.Context, agentID, name string) (*mcpgate.Skill, error) {
	skills, err := s.listSkills(ctx, " WHERE agent_id = $1 AND name = $2", " WHERE agent_id = $1 AND skill_name = $2", agentID, name)
	if err != nil {
		return nil, err
	} else if len(skills) == 0 {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q has no skill %q", agentID, name)
	}
	return skills[0], nil
}

// ListSkills returns an agent's skills with their tools, in the order they
// were first put; agentID "" lists every agent's skills, by agent ID first.
func (s *Store) ListSkills(ctx context.Context, agentID string) ([]*mcpgate.Skill, error) {
	if agentID == "" {
		return s.listSkills(ctx, "", "")
	}
	return s.listSkills(ctx, " WHERE agent_id = $1", " WHERE agent_id = $1", agentID)
}

// listSkills reads the skills and the tools matching the two WHERE clauses,
// which take the same arguments, in two queries.
func (s *Store) listSkills(ctx context.Context, skillWhere, toolWhere string, args ...any) ([]*mcpgate.Skill, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+skillColumns+` FROM skills`+skillWhere+` ORDER BY agent_id, position`, args...)
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	skills, err := collect(rows, scanSkill)
	if err != nil || len(skills) == 0 {
		return skills, err
	}
	rows, err = s.read.QueryContext(ctx, `SELECT agent_id, skill_name, spec FROM tools`+toolWhere+` ORDER BY agent_id, skill_name, position`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	tools, err := collect(rows, scanTool)
	if err != nil {
		return nil, err
	}
	return skills, attachTools(skills, tools)
}

// attachTools appends each tool, in the order given, to its skill.
func attachTools(skills []*mcpgate.Skill, tools []*storedTool) error {
	type key struct{ agent, skill string }
	byKey := make(map[key]*mcpgate.Skill, len(skills))
	for _, sk := range skills {
		byKey[key{sk.AgentID, sk.Name}] = sk
	}
	for _, t := range tools {
		sk := byKey[key{t.agentID, t.skillName}]
		if sk == nil {
			continue // put between the two queries; the next read has it
		}
		tool, err := decodeTool(t.spec)
		if err != nil {
			return fmt.Errorf("tool of %s/%s: %w", t.agentID, t.skillName, err)
		}
		sk.Tools = append(sk.Tools, tool)
	}
	return nil
}

// DeleteSkill removes a skill and its tools. Returns ENOTFOUND if the agent
// has no such skill.
func (s *Store) DeleteSkill(ctx context.Context, agentID, name string) error {
	return s.withTx(ctx, func(tx *Store) error {
		err := tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q has no skill %q", agentID, name),
			`DELETE FROM skills WHERE agent_id = $1 AND name = $2`, agentID, name)
		if err != nil {
			return err
		}
		return tx.bumpGeneration(ctx)
	})
}

// storedTool is a row of the tools table.
type storedTool struct {
	agentID, skillName, spec string
}

func scanTool(row scanner) (*storedTool, error) {
	var t storedTool
	return &t, row.Scan(&t.agentID, &t.skillName, &t.spec)
}

func scanSkill(row scanner) (*mcpgate.Skill, error) {
	var agentID, name, kind, spec, source string
	var created, updated int64
	if err := row.Scan(&agentID, &name, &kind, &spec, &source, &created, &updated); err != nil {
		return nil, err
	}
	sk, err := decodeSkill(spec)
	if err != nil {
		return nil, fmt.Errorf("skill %s/%s: %w", agentID, name, err)
	}
	sk.AgentID, sk.Name, sk.Kind, sk.Source = agentID, name, mcpgate.SkillKind(kind), source
	sk.CreatedAt, sk.UpdatedAt = fromMicros(created), fromMicros(updated)
	sk.Tools = []*mcpgate.Tool{}
	return sk, nil
}

// equal reports whether two encodings describe the same skill.
func (e *encodedSkill) equal(o *encodedSkill) bool {
	return e.kind == o.kind && e.spec == o.spec && e.source == o.source && slices.Equal(e.tools, o.tools)
}
