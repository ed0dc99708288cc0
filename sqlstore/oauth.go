package sqlstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const (
	oauthClientColumns  = `id, name, redirect_uris, auth_method, secret_hash, client_uri, logo_uri, created_at`
	oauthGrantColumns   = `id, user_id, client_id, agents, created_at, updated_at`
	oauthFamilyColumns  = `id, grant_id, client_id, user_id, created_at, revoked_at`
	oauthCodeColumns    = `hash, family_id, client_id, user_id, redirect_uri, challenge, resource, scope, agents, created_at, expires_at, used_at`
	oauthRefreshColumns = `hash, family_id, client_id, user_id, resource, scope, agents, created_at, expires_at, used_at`
)

// CreateOAuthClient stores c, setting its CreatedAt. Returns ECONFLICT if
// the ID exists.
func (s *Store) CreateOAuthClient(ctx context.Context, c *mcpgate.OAuthClient) error {
	c.CreatedAt = now()
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.Name, jsonList(c.RedirectURIs), c.AuthMethod, c.SecretHash, c.ClientURI, c.LogoURI, micros(c.CreatedAt))
	if s.d.Violation(err).Kind == UniqueViolation {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "OAuth client %q exists", c.ID)
	} else if err != nil {
		return fmt.Errorf("create OAuth client %s: %w", c.ID, err)
	}
	return nil
}

// FindOAuthClient returns ENOTFOUND if there is no such client.
func (s *Store) FindOAuthClient(ctx context.Context, id string) (*mcpgate.OAuthClient, error) {
	c, err := scanOAuthClient(s.read.QueryRowContext(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "OAuth client %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find OAuth client %s: %w", id, err)
	}
	return c, nil
}

// ListOAuthClients returns every registered client, by ID.
func (s *Store) ListOAuthClients(ctx context.Context) ([]*mcpgate.OAuthClient, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list OAuth clients: %w", err)
	}
	return collect(rows, scanOAuthClient)
}

// DeleteOAuthClient removes the client and its grants and revokes its
// token families, in one transaction. Returns ENOTFOUND if there is no
// such client.
func (s *Store) DeleteOAuthClient(ctx context.Context, id string, at time.Time) error {
	return s.withTx(ctx, func(tx *Store) error {
		err := tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "OAuth client %q not found", id), `DELETE FROM oauth_clients WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if _, err := tx.write.ExecContext(ctx, `DELETE FROM oauth_grants WHERE client_id = $1`, id); err != nil {
			return fmt.Errorf("delete grants to OAuth client %s: %w", id, err)
		}
		_, err = tx.write.ExecContext(ctx, `UPDATE oauth_families SET revoked_at = COALESCE(revoked_at, $2) WHERE client_id = $1`, id, micros(at))
		if err != nil {
			return fmt.Errorf("revoke token families of OAuth client %s: %w", id, err)
		}
		return nil
	})
}

// SaveOAuthGrant stores the user's grant to the client, replacing the
// agents of an existing one, whose ID and CreatedAt it keeps. Returns
// EINVALID if the user does not exist.
func (s *Store) SaveOAuthGrant(ctx context.Context, g *mcpgate.OAuthGrant) error {
	if g.ID == "" {
		g.ID = mcpgate.NewID("grt_")
	}
	g.UpdatedAt = now()
	var id string
	var created int64
	err := s.write.QueryRowContext(ctx, `INSERT INTO oauth_grants (`+oauthGrantColumns+`) VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (user_id, client_id) DO UPDATE SET agents = excluded.agents, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		g.ID, g.UserID, g.ClientID, jsonList(g.Agents), micros(g.UpdatedAt)).Scan(&id, &created)
	if s.d.Violation(err).Kind == ForeignKeyViolation {
		return mcpgate.Errorf(mcpgate.EINVALID, "OAuth grant: user %q does not exist", g.UserID)
	} else if err != nil {
		return fmt.Errorf("save OAuth grant of %s to %s: %w", g.UserID, g.ClientID, err)
	}
	g.ID, g.CreatedAt = id, fromMicros(created)
	return nil
}

// FindOAuthGrant returns the user's grant to the client; ENOTFOUND if there
// is none.
func (s *Store) FindOAuthGrant(ctx context.Context, userID, clientID string) (*mcpgate.OAuthGrant, error) {
	g, err := scanOAuthGrant(s.read.QueryRowContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants
		WHERE user_id = $1 AND client_id = $2`, userID, clientID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "user %q has not granted client %q", userID, clientID)
	} else if err != nil {
		return nil, fmt.Errorf("find OAuth grant of %s to %s: %w", userID, clientID, err)
	}
	return g, nil
}

// ListOAuthGrants returns the user's grants ordered by client ID.
func (s *Store) ListOAuthGrants(ctx context.Context, userID string) ([]*mcpgate.OAuthGrant, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants WHERE user_id = $1 ORDER BY client_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list OAuth grants of %s: %w", userID, err)
	}
	return collect(rows, scanOAuthGrant)
}

// RevokeOAuthGrant removes the grant and revokes its token families, in one
// transaction. Returns ENOTFOUND if there is no such grant.
func (s *Store) RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error {
	return s.withTx(ctx, func(tx *Store) error {
		err := tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "OAuth grant %q not found", id), `DELETE FROM oauth_grants WHERE id = $1`, id)
		if err != nil {
			return err
		}
		_, err = tx.write.ExecContext(ctx, `UPDATE oauth_families SET revoked_at = COALESCE(revoked_at, $2) WHERE grant_id = $1`, id, micros(at))
		if err != nil {
			return fmt.Errorf("revoke token families of grant %s: %w", id, err)
		}
		return nil
	})
}

// CreateOAuthFamily stores f, setting its CreatedAt. Returns ECONFLICT if
// the ID exists and EINVALID if the user does not.
func (s *Store) CreateOAuthFamily(ctx context.Context, f *mcpgate.OAuthFamily) error {
	f.CreatedAt, f.RevokedAt = now(), normalizePtr(f.RevokedAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_families (`+oauthFamilyColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		f.ID, f.GrantID, f.ClientID, f.UserID, micros(f.CreatedAt), nullMicros(f.RevokedAt))
	switch s.d.Violation(err).Kind {
	case UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "token family %q exists", f.ID)
	case ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "token family %q: user %q does not exist", f.ID, f.UserID)
	}
	if err != nil {
		return fmt.Errorf("create token family %s: %w", f.ID, err)
	}
	return nil
}

// FindOAuthFamily returns ENOTFOUND if there is no such family.
func (s *Store) FindOAuthFamily(ctx context.Context, id string) (*mcpgate.OAuthFamily, error) {
	var f mcpgate.OAuthFamily
	var created int64
	var revoked sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT `+oauthFamilyColumns+` FROM oauth_families WHERE id = $1`, id).
		Scan(&f.ID, &f.GrantID, &f.ClientID, &f.UserID, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "token family %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find token family %s: %w", id, err)
	}
	f.CreatedAt, f.RevokedAt = fromMicros(created), timePtr(revoked)
	return &f, nil
}

// RevokeOAuthFamily marks the family revoked, keeping the first time.
// Returns ENOTFOUND if there is no such family.
func (s *Store) RevokeOAuthFamily(ctx context.Context, id string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE oauth_families SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, micros(at))
	if err != nil {
		return fmt.Errorf("revoke token family %s: %w", id, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "token family %q not found", id))
}

// CreateOAuthCode stores c. Returns ECONFLICT if the hash exists and
// EINVALID if its family does not.
func (s *Store) CreateOAuthCode(ctx context.Context, c *mcpgate.OAuthCode) error {
	c.CreatedAt, c.ExpiresAt, c.UsedAt = normalize(c.CreatedAt), normalize(c.ExpiresAt), normalizePtr(c.UsedAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_codes (`+oauthCodeColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.Hash, c.FamilyID, c.ClientID, c.UserID, c.RedirectURI, c.Challenge, c.Resource, c.Scope, jsonList(c.Agents),
		micros(c.CreatedAt), micros(c.ExpiresAt), nullMicros(c.UsedAt))
	return s.tokenWriteError(err, "authorization code", c.FamilyID)
}

// UseOAuthCode marks the code used and returns it as it was before: UsedAt
// is nil when this call used it. The conditional update makes it atomic.
func (s *Store) UseOAuthCode(ctx context.Context, hash string, at time.Time) (*mcpgate.OAuthCode, error) {
	first, err := s.markUsed(ctx, "oauth_codes", hash, at)
	if err != nil {
		return nil, err
	}
	c, err := scanOAuthCode(s.read.QueryRowContext(ctx, `SELECT `+oauthCodeColumns+` FROM oauth_codes WHERE hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "unknown authorization code")
	} else if err != nil {
		return nil, fmt.Errorf("find authorization code: %w", err)
	}
	if first {
		c.UsedAt = nil
	}
	return c, nil
}

// CreateOAuthRefreshToken stores t. Returns ECONFLICT if the hash exists
// and EINVALID if its family does not.
func (s *Store) CreateOAuthRefreshToken(ctx context.Context, t *mcpgate.OAuthRefreshToken) error {
	t.CreatedAt, t.ExpiresAt, t.UsedAt = normalize(t.CreatedAt), normalize(t.ExpiresAt), normalizePtr(t.UsedAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_refresh_tokens (`+oauthRefreshColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.Hash, t.FamilyID, t.ClientID, t.UserID, t.Resource, t.Scope, jsonList(t.Agents),
		micros(t.CreatedAt), micros(t.ExpiresAt), nullMicros(t.UsedAt))
	return s.tokenWriteError(err, "refresh token", t.FamilyID)
}

// FindOAuthRefreshToken returns ENOTFOUND if no token has that hash.
func (s *Store) FindOAuthRefreshToken(ctx context.Context, hash string) (*mcpgate.OAuthRefreshToken, error) {
	t, err := scanOAuthRefresh(s.read.QueryRowContext(ctx, `SELECT `+oauthRefreshColumns+` FROM oauth_refresh_tokens WHERE hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "unknown refresh token")
	} else if err != nil {
		return nil, fmt.Errorf("find refresh token: %w", err)
	}
	return t, nil
}

// UseOAuthRefreshToken marks the token used and returns it as it was
// before: UsedAt is nil when this call used it.
func (s *Store) UseOAuthRefreshToken(ctx context.Context, hash string, at time.Time) (*mcpgate.OAuthRefreshToken, error) {
	first, err := s.markUsed(ctx, "oauth_refresh_tokens", hash, at)
	if err != nil {
		return nil, err
	}
	t, err := s.FindOAuthRefreshToken(ctx, hash)
	if err != nil {
		return nil, err
	}
	if first {
		t.UsedAt = nil
	}
	return t, nil
}

// markUsed sets used_at on an unused row of table, reporting whether this
// call was the one that did.
func (s *Store) markUsed(ctx context.Context, table, hash string, at time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE `+table+` SET used_at = $2 WHERE hash = $1 AND used_at IS NULL`, hash, micros(at))
	if err != nil {
		return false, fmt.Errorf("use %s: %w", table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("rows affected: %w", err)
	}
	return n == 1, nil
}

// tokenWriteError maps a failed insert of a code or refresh token.
func (s *Store) tokenWriteError(err error, what, familyID string) error {
	switch s.d.Violation(err).Kind {
	case UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "%s exists", what)
	case ForeignKeyViolation:
		return mcpgate.Errorf(mcpgate.EINVALID, "%s: token family %q does not exist", what, familyID)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	return nil
}

// CreateOAuthSigningKey stores k, setting its CreatedAt. Returns ECONFLICT
// if the ID exists.
func (s *Store) CreateOAuthSigningKey(ctx context.Context, k *mcpgate.OAuthSigningKey) error {
	k.CreatedAt = now()
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_signing_keys (id, secret, created_at) VALUES ($1, $2, $3)`,
		k.ID, hex.EncodeToString(k.Secret), micros(k.CreatedAt))
	if s.d.Violation(err).Kind == UniqueViolation {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "signing key %q exists", k.ID)
	} else if err != nil {
		return fmt.Errorf("create signing key %s: %w", k.ID, err)
	}
	return nil
}

// ListOAuthSigningKeys returns every signing key, newest first.
func (s *Store) ListOAuthSigningKeys(ctx context.Context) ([]*mcpgate.OAuthSigningKey, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, secret, created_at FROM oauth_signing_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return collect(rows, scanSigningKey)
}

// UpdateOAuthSigningKey replaces the stored secret of the key k.ID with
// k.Secret. Returns ENOTFOUND if no key has that ID.
func (s *Store) UpdateOAuthSigningKey(ctx context.Context, k *mcpgate.OAuthSigningKey) error {
	res, err := s.write.ExecContext(ctx, `UPDATE oauth_signing_keys SET secret = $1 WHERE id = $2`, hex.EncodeToString(k.Secret), k.ID)
	if err != nil {
		return fmt.Errorf("update signing key %s: %w", k.ID, err)
	}
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "signing key %q not found", k.ID))
}

// DeleteExpiredOAuth removes codes and refresh tokens that expired before
// the given time, returning how many went.
func (s *Store) DeleteExpiredOAuth(ctx context.Context, before time.Time) (int, error) {
	var total int64
	for _, table := range []string{"oauth_codes", "oauth_refresh_tokens"} {
		res, err := s.write.ExecContext(ctx, `DELETE FROM `+table+` WHERE expires_at < $1`, micros(before))
		if err != nil {
			return int(total), fmt.Errorf("delete expired %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return int(total), fmt.Errorf("rows affected: %w", err)
		}
		total += n
	}
	return int(total), nil
}

func scanOAuthClient(row scanner) (*mcpgate.OAuthClient, error) {
	var c mcpgate.OAuthClient
	var uris string
	var created int64
	if err := row.Scan(&c.ID, &c.Name, &uris, &c.AuthMethod, &c.SecretHash, &c.ClientURI, &c.LogoURI, &created); err != nil {
		return nil, err
	}
	c.CreatedAt = fromMicros(created)
	return &c, json.Unmarshal([]byte(uris), &c.RedirectURIs)
}

func scanOAuthGrant(row scanner) (*mcpgate.OAuthGrant, error) {
	var g mcpgate.OAuthGrant
	var agents string
	var created, updated int64
	if err := row.Scan(&g.ID, &g.UserID, &g.ClientID, &agents, &created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &g, json.Unmarshal([]byte(agents), &g.Agents)
}

func scanOAuthCode(row scanner) (*mcpgate.OAuthCode, error) {
	var c mcpgate.OAuthCode
	var agents string
	var created, expires int64
	var used sql.NullInt64
	err := row.Scan(&c.Hash, &c.FamilyID, &c.ClientID, &c.UserID, &c.RedirectURI, &c.Challenge, &c.Resource, &c.Scope,
		&agents, &created, &expires, &used)
	if err != nil {
		return nil, err
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = fromMicros(created), fromMicros(expires), timePtr(used)
	return &c, json.Unmarshal([]byte(agents), &c.Agents)
}

func scanOAuthRefresh(row scanner) (*mcpgate.OAuthRefreshToken, error) {
	var t mcpgate.OAuthRefreshToken
	var agents string
	var created, expires int64
	var used sql.NullInt64
	err := row.Scan(&t.Hash, &t.FamilyID, &t.ClientID, &t.UserID, &t.Resource, &t.Scope, &agents, &created, &expires, &used)
	if err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMicros(created), fromMicros(expires), timePtr(used)
	return &t, json.Unmarshal([]byte(agents), &t.Agents)
}

func scanSigningKey(row scanner) (*mcpgate.OAuthSigningKey, error) {
	var k mcpgate.OAuthSigningKey
	var secret string
	var created int64
	if err := row.Scan(&k.ID, &secret, &created); err != nil {
		return nil, err
	}
	k.CreatedAt = fromMicros(created)
	var err error
	k.Secret, err = hex.DecodeString(secret)
	return &k, err
}

// jsonList stores a list of strings as a JSON array, [] when empty.
func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v) // a []string always marshals
	return string(b)
}
