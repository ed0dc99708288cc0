package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const keyColumns = `id, kind, user_id, agent_id, name, hash, hint, source, created_at, last_used_at, revoked_at, expires_at`

// keyByHashQuery is FindKeyByHash's query, which every authenticated
// request runs: one lookup in the unique index on hash.
const keyByHashQuery = `SELECT ` + keyColumns + ` FROM api_keys WHERE hash = $1`

// CreateKey stores k, setting its ID when empty and its CreatedAt. Returns
// ECONFLICT if the ID or hash exists and EINVALID if its user or agent does
// not.
func (s *Store) CreateKey(ctx context.Context, k *mcpgate.APIKey) error {
	if k.ID == "" {
		k.ID = mcpgate.NewID("key_")
	}
	k.CreatedAt = now()
	k.LastUsedAt, k.RevokedAt, k.ExpiresAt = normalizePtr(k.LastUsedAt), normalizePtr(k.RevokedAt), normalizePtr(k.ExpiresAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		k.ID, string(k.Kind), nullString(k.UserID), nullString(k.AgentID), k.Name, k.Hash, k.Hint, k.Source,
		micros(k.CreatedAt), nullMicros(k.LastUsedAt), nullMicros(k.RevokedAt), nullMicros(k.ExpiresAt))
	if err == nil {
		return nil
	}
	v := s.d.Violation(err)
	switch {
	case v.Kind == UniqueViolation && v.On("hash"):
		return mcpgate.Errorf(mcpgate.ECONFLICT, "key %q: a key with the same secret exists", k.ID)
	case v.Kind == UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "key %q exists", k.ID)
	case v.Kind == ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "key %q: user %q or agent %q does not exist", k.ID, k.UserID, k.AgentID)
	}
	return fmt.Errorf("create key %s: %w", k.ID, err)
}

// FindKey returns ENOTFOUND if there is no key with that ID.
func (s *Store) FindKey(ctx context.Context, id string) (*mcpgate.APIKey, error) {
	k, err := scanKey(s.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "key %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find key %s: %w", id, err)
	}
	return k, nil
}

// FindKeyByHash returns ENOTFOUND if no key has that hash. Revoked keys are
// returned, with RevokedAt set.
func (s *Store) FindKeyByHash(ctx context.Context, hash string) (*mcpgate.APIKey, error) {
	k, err := scanKey(s.queryRow(ctx, keyByHashQuery, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no key has that secret")
	} else if err != nil {
		return nil, fmt.Errorf("find key by hash: %w", err)
	}
	return k, nil
}

// ListKeys returns matching keys, newest first.
func (s *Store) ListKeys(ctx context.Context, f mcpgate.KeyFilter) ([]*mcpgate.APIKey, error) {
	var w where
	w.equal("user_id", f.UserID)
	w.equal("agent_id", f.AgentID)
	w.equal("kind", string(f.Kind))
	rows, err := s.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys`+w.String()+` ORDER BY created_at DESC, id DESC`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return collect(rows, scanKey)
}

// RevokeKey marks a key revoked. Returns ENOTFOUND if there is no such key;
// revoking a revoked key keeps its first revocation time.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, micros(at))
	if err != nil {
		return fmt.Errorf("revoke key %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "key %q not found", id))
}

// TouchKey records that the key was used at the given time. Returns
// ENOTFOUND if there is no such key.
func (s *Store) TouchKey(ctx context.Context, id string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, id, micros(at))
	if err != nil {
		return fmt.Errorf("touch key %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "key %q not found", id))
}

// UpdateKey saves k's name and expiry. Returns ENOTFOUND if there is no
// key with k's ID.
func (s *Store) UpdateKey(ctx context.Context, k *mcpgate.APIKey) error {
	k.ExpiresAt = normalizePtr(k.ExpiresAt)
	res, err := s.write.ExecContext(ctx, `UPDATE api_keys SET name = $2, expires_at = $3 WHERE id = $1`, k.ID, k.Name, nullMicros(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("update key %s: %w", k.ID, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "key %q not found", k.ID))
}

func scanKey(row scanner) (*mcpgate.APIKey, error) {
	var k mcpgate.APIKey
	var userID, agentID sql.NullString
	var created int64
	var lastUsed, revoked, expires sql.NullInt64
	err := row.Scan(&k.ID, &k.Kind, &userID, &agentID, &k.Name, &k.Hash, &k.Hint, &k.Source, &created, &lastUsed, &revoked, &expires)
	if err != nil {
		return nil, err
	}
	k.UserID, k.AgentID = userID.String, agentID.String
	k.CreatedAt, k.LastUsedAt, k.RevokedAt, k.ExpiresAt = fromMicros(created), timePtr(lastUsed), timePtr(revoked), timePtr(expires)
	return &k, nil
}
