package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const idempotencyColumns = `identity, agent_id, key, token, hash, result, claimed_at, stale_at, expires_at`

// claimIdempotencyQuery inserts a claim unless its key is held.
const claimIdempotencyQuery = `INSERT INTO idempotency (` + idempotencyColumns + `)
	VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8) ON CONFLICT (identity, agent_id, key) DO NOTHING`

// completeIdempotencyQuery stores the result of the claim with a token.
const completeIdempotencyQuery = `UPDATE idempotency SET result = $5
	WHERE identity = $1 AND agent_id = $2 AND key = $3 AND token = $4`

// ClaimIdempotency claims c's key: one INSERT that the primary key lets win
// once; failing that, one UPDATE that takes over an expired or stale row;
// failing that, the row that holds the key.
func (s *Store) ClaimIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim, now time.Time) (*mcpgate.IdempotencyClaim, error) {
	normalizeClaim(c)
	for range 3 {
		won, err := s.claimRow(ctx, c, now)
		if err != nil || won {
			return nil, err
		}
		held, err := s.FindIdempotency(ctx, c.Identity, c.AgentID, c.Key)
		if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			return held, err
		}
		// Released between our statements: try again.
	}
	return nil, fmt.Errorf("claim idempotency key %s: the key keeps changing hands", c.Key)
}

// normalizeClaim gives c a token and stored times.
func normalizeClaim(c *mcpgate.IdempotencyClaim) {
	if c.Token == "" {
		c.Token = mcpgate.NewID("")
	}
	c.Result = nil
	c.ClaimedAt, c.StaleAt, c.ExpiresAt = normalize(c.ClaimedAt), normalize(c.StaleAt), normalize(c.ExpiresAt)
}

// claimRow inserts c, or replaces an expired or stale row with it, and
// reports whether it did.
func (s *Store) claimRow(ctx context.Context, c *mcpgate.IdempotencyClaim, now time.Time) (bool, error) {
	args := []any{c.Identity, c.AgentID, c.Key, c.Token, c.Hash, micros(c.ClaimedAt), micros(c.StaleAt), micros(c.ExpiresAt)}
	res, err := s.exec(ctx, claimIdempotencyQuery, args...)
	if err != nil {
		return false, fmt.Errorf("claim idempotency key %s: %w", c.Key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, err
	}
	res, err = s.write.ExecContext(ctx, `UPDATE idempotency
		SET token = $4, hash = $5, result = NULL, claimed_at = $6, stale_at = $7, expires_at = $8
		WHERE identity = $1 AND agent_id = $2 AND key = $3
		AND (expires_at <= $9 OR (result IS NULL AND stale_at <= $9))`, append(args, micros(now))...)
	if err != nil {
		return false, fmt.Errorf("take over idempotency key %s: %w", c.Key, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CompleteIdempotency stores the result of the claim with c's token.
func (s *Store) CompleteIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim, result []byte) error {
	res, err := s.exec(ctx, completeIdempotencyQuery, c.Identity, c.AgentID, c.Key, c.Token, string(result))
	if err != nil {
		return fmt.Errorf("complete idempotency key %s: %w", c.Key, err)
	}
	if err := affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "idempotency key %q was not held by this call", c.Key)); err != nil {
		return err
	}
	c.Result = result
	return nil
}

// ReleaseIdempotency deletes the claim with c's token, if it is there.
func (s *Store) ReleaseIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM idempotency
		WHERE identity = $1 AND agent_id = $2 AND key = $3 AND token = $4`, c.Identity, c.AgentID, c.Key, c.Token)
	if err != nil {
		return fmt.Errorf("release idempotency key %s: %w", c.Key, err)
	}
	return nil
}

// FindIdempotency returns the row of a key; ENOTFOUND if none.
func (s *Store) FindIdempotency(ctx context.Context, identity, agentID, key string) (*mcpgate.IdempotencyClaim, error) {
	var c mcpgate.IdempotencyClaim
	var result sql.NullString
	var claimed, stale, expires int64
	err := s.write.QueryRowContext(ctx, `SELECT `+idempotencyColumns+` FROM idempotency
		WHERE identity = $1 AND agent_id = $2 AND key = $3`, identity, agentID, key).
		Scan(&c.Identity, &c.AgentID, &c.Key, &c.Token, &c.Hash, &result, &claimed, &stale, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "idempotency key %q not found", key)
	} else if err != nil {
		return nil, fmt.Errorf("find idempotency key %s: %w", key, err)
	}
	if result.Valid {
		c.Result = []byte(result.String)
	}
	c.ClaimedAt, c.StaleAt, c.ExpiresAt = fromMicros(claimed), fromMicros(stale), fromMicros(expires)
	return &c, nil
}

// DeleteExpiredIdempotency deletes at most limit rows expired at now.
func (s *Store) DeleteExpiredIdempotency(ctx context.Context, now time.Time, limit int) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM idempotency WHERE (identity, agent_id, key) IN
		(SELECT identity, agent_id, key FROM idempotency WHERE expires_at <= $1 LIMIT $2)`, micros(now), limit)
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	return res.RowsAffected()
}
