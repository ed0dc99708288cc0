package mcpgate

import (
	"context"
	"time"
)

// OAuth client authentication methods at the token endpoint (RFC 7591).
const (
	AuthMethodNone  = "none"                // a public client: no secret, PKCE alone
	AuthMethodBasic = "client_secret_basic" // the secret in HTTP Basic authentication
	AuthMethodPost  = "client_secret_post"  // the secret in the form body
)

// OAuthClient is a client registered with the gateway's OAuth authorization
// server through dynamic client registration (RFC 7591). Clients known by a
// Client ID Metadata Document are not stored: their document is.
type OAuthClient struct {
	// ID is the client_id.
	ID   string `json:"client_id"`
	Name string `json:"client_name,omitempty"`
	// RedirectURIs are matched exactly at /oauth/authorize.
	RedirectURIs []string `json:"redirect_uris"`
	// AuthMethod is one of the AuthMethod* constants.
	AuthMethod string `json:"token_endpoint_auth_method"`
	// SecretHash is the hex SHA-256 of the client secret of a confidential
	// client, "" for a public one.
	SecretHash string `json:"-"`
	// ClientURI and LogoURI are shown on the consent page when set.
	ClientURI string    `json:"client_uri,omitempty"`
	LogoURI   string    `json:"logo_uri,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// OAuthGrant is a user's consent to one client: the agents picked on the
// consent page. A later authorization of the same client for agents the
// grant covers skips the consent page.
type OAuthGrant struct {
	ID        string
	UserID    string
	ClientID  string
	Agents    []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// OAuthFamily is the set of tokens issued from one authorization code: the
// access and refresh tokens of every rotation. Revoking it stops them all,
// which is what a replayed code or refresh token does.
type OAuthFamily struct {
	ID        string
	GrantID   string
	ClientID  string
	UserID    string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// OAuthCode is an authorization code. Only the SHA-256 of the code is kept.
type OAuthCode struct {
	// Hash is the hex SHA-256 of the code.
	Hash     string
	FamilyID string
	ClientID string
	UserID   string
	// RedirectURI must be repeated at the token endpoint.
	RedirectURI string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	// Resource is the canonical resource (RFC 8707) the tokens are for.
	Resource  string
	Scope     string
	Agents    []string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when the code was exchanged; nil until then.
	UsedAt *time.Time
}

// OAuthRefreshToken is a refresh token. Only the SHA-256 of the token is
// kept; each use rotates it: the old one is marked used, a new one issued
// in the same family.
type OAuthRefreshToken struct {
	// Hash is the hex SHA-256 of the token.
	Hash      string
	FamilyID  string
	ClientID  string
	UserID    string
	Resource  string
	Scope     string
	Agents    []string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when the token was rotated; nil until then.
	UsedAt *time.Time
}

// OAuthSigningKey is an HMAC key that signs access tokens (HS256). The
// newest key signs; every stored key verifies, so rotating is adding a key.
type OAuthSigningKey struct {
	ID        string
	Secret    []byte
	CreatedAt time.Time
}

// OAuthStore keeps the OAuth authorization server's clients, grants, codes,
// tokens and signing keys.
type OAuthStore interface {
	// CreateOAuthClient stores c, setting its CreatedAt. Returns ECONFLICT
	// if the ID exists.
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	// FindOAuthClient returns ENOTFOUND if there is no such client.
	FindOAuthClient(ctx context.Context, id string) (*OAuthClient, error)
	// ListOAuthClients returns every registered client, by ID.
	ListOAuthClients(ctx context.Context) ([]*OAuthClient, error)
	// DeleteOAuthClient removes a registered client and every user's grant
	// to it, and revokes the token families issued to it, at once.
	// Returns ENOTFOUND if there is no such client.
	DeleteOAuthClient(ctx context.Context, id string, at time.Time) error

	// SaveOAuthGrant stores the user's grant to the client, replacing the
	// agents of an existing one (whose ID it keeps), and sets g's ID and
	// timestamps. Returns EINVALID if the user does not exist.
	SaveOAuthGrant(ctx context.Context, g *OAuthGrant) error
	// FindOAuthGrant returns the user's grant to the client; ENOTFOUND if
	// there is none.
	FindOAuthGrant(ctx context.Context, userID, clientID string) (*OAuthGrant, error)
	// ListOAuthGrants returns the user's grants ordered by client ID.
	ListOAuthGrants(ctx context.Context, userID string) ([]*OAuthGrant, error)
	// RevokeOAuthGrant removes the grant and revokes every token family
	// issued under it. Returns ENOTFOUND if there is no such grant.
	RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error

	// CreateOAuthFamily stores f, setting its CreatedAt. Returns ECONFLICT
	// if the ID exists and EINVALID if the user does not.
	CreateOAuthFamily(ctx context.Context, f *OAuthFamily) error
	// FindOAuthFamily returns ENOTFOUND if there is no such family.
	FindOAuthFamily(ctx context.Context, id string) (*OAuthFamily, error)
	// RevokeOAuthFamily marks the family revoked, keeping the first time.
	// Returns ENOTFOUND if there is no such family.
	RevokeOAuthFamily(ctx context.Context, id string, at time.Time) error

	// CreateOAuthCode stores c. Returns ECONFLICT if the hash exists and
	// EINVALID if its family does not.
	CreateOAuthCode(ctx context.Context, c *OAuthCode) error
	// UseOAuthCode marks the code used at the given time, atomically, and
	// returns it as it was before: UsedAt is nil when this call used it and
	// set when it had been used before (a replay). Returns ENOTFOUND if
	// there is no such code.
	UseOAuthCode(ctx context.Context, hash string, at time.Time) (*OAuthCode, error)

	// CreateOAuthRefreshToken stores t. Returns ECONFLICT if the hash exists
	// and EINVALID if its family does not.
	CreateOAuthRefreshToken(ctx context.Context, t *OAuthRefreshToken) error
	// FindOAuthRefreshToken returns ENOTFOUND if no token has that hash.
	FindOAuthRefreshToken(ctx context.Context, hash string) (*OAuthRefreshToken, error)
	// UseOAuthRefreshToken marks the token used, atomically, and returns it
	// as it was before, as UseOAuthCode does. Returns ENOTFOUND if no token
	// has that hash.
	UseOAuthRefreshToken(ctx context.Context, hash string, at time.Time) (*OAuthRefreshToken, error)

	// CreateOAuthSigningKey stores k, setting its CreatedAt. Returns
	// ECONFLICT if the ID exists.
	CreateOAuthSigningKey(ctx context.Context, k *OAuthSigningKey) error
	// ListOAuthSigningKeys returns every signing key, newest first.
	ListOAuthSigningKeys(ctx context.Context) ([]*OAuthSigningKey, error)
	// UpdateOAuthSigningKey replaces the stored secret of the key k.ID with
	// k.Secret, as when a key stored in plain form is sealed. Returns
	// ENOTFOUND if no key has that ID.
	UpdateOAuthSigningKey(ctx context.Context, k *OAuthSigningKey) error

	// DeleteExpiredOAuth removes codes and refresh tokens that expired
	// before the given time, returning how many went.
	DeleteExpiredOAuth(ctx context.Context, before time.Time) (int, error)
}
