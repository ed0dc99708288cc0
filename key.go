package mcpgate

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// KeyKind says what an API key stands for.
type KeyKind string

// The kinds of API key, with the prefix each key's secret starts with.
const (
	KeyUser  KeyKind = "user"  // "oag_…": every MCP-enabled agent its user owns
	KeyAgent KeyKind = "agent" // "bak_…": one agent
)

// Prefixes of API key secrets.
const (
	UserKeyPrefix  = "oag_"
	AgentKeyPrefix = "bak_"
)

// APIKey is a stored API key. The secret itself is shown once, when the key
// is made; only its SHA-256 hash is kept.
type APIKey struct {
	ID   string  `json:"id"`
	Kind KeyKind `json:"kind"`
	// UserID is the key's user (user keys) or the agent's owner at the time
	// the key was made (agent keys).
	UserID  string `json:"user_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	Name    string `json:"name,omitempty"`
	// Hash is the hex SHA-256 of the secret.
	Hash string `json:"-"`
	// Hint is the start of the secret, enough to recognize it in a list.
	Hint       string     `json:"hint"`
	Source     string     `json:"source"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// ExpiresAt is when the key stops working; nil for never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Expired reports whether the key has expired at now.
func (k *APIKey) Expired(now time.Time) bool {
	return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}

// KeyFilter narrows ListKeys. Zero fields match everything.
type KeyFilter struct {
	UserID  string
	AgentID string
	Kind    KeyKind
}

// KeyStore keeps API keys.
type KeyStore interface {
	// CreateKey stores k, setting its CreatedAt. Returns ECONFLICT if the ID
	// or hash exists.
	CreateKey(ctx context.Context, k *APIKey) error
	// FindKey returns ENOTFOUND if there is no key with that ID.
	FindKey(ctx context.Context, id string) (*APIKey, error)
	// FindKeyByHash returns ENOTFOUND if no key has that hash. Revoked keys
	// are returned, with RevokedAt set.
	FindKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// ListKeys returns matching keys, newest first.
	ListKeys(ctx context.Context, f KeyFilter) ([]*APIKey, error)
	// RevokeKey marks a key revoked. Returns ENOTFOUND if there is no such
	// key; revoking a revoked key keeps its first revocation time.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// TouchKey records that the key was used at the given time.
	TouchKey(ctx context.Context, id string, at time.Time) error
	// UpdateKey saves k's name and expiry (nil: never), the only fields of
	// a key that change. Returns ENOTFOUND if there is no key with k's ID.
	UpdateKey(ctx context.Context, k *APIKey) error
}

// KeyLister lists API keys; KeyStore is one.
type KeyLister interface {
	ListKeys(ctx context.Context, f KeyFilter) ([]*APIKey, error)
}

// OwnKeys returns the keys a user manages: its user keys and the agent keys
// of agents, the agents it owns, newest first.
func OwnKeys(ctx context.Context, s KeyLister, userID string, agents []*Agent) ([]*APIKey, error) {
	keys, err := s.ListKeys(ctx, KeyFilter{UserID: userID, Kind: KeyUser})
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		more, err := s.ListKeys(ctx, KeyFilter{AgentID: a.ID})
		if err != nil {
			return nil, err
		}
		keys = append(keys, more...)
	}
	slices.SortStableFunc(keys, func(a, b *APIKey) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return keys, nil
}
