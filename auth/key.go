// Package auth authenticates requests: API keys (user keys oag_… and agent
// keys bak_…) from request headers, and user passwords. OAuth 2.1 access
// tokens are verified by package auth/oauth, behind the Tokens interface.
//
// It depends on the root package only; it must not import a store, the
// transport or a backend.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// secretLen is the number of base62 characters after a key's prefix:
// 43 characters carry 256 bits.
const secretLen = 43

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKey makes a key of the given kind for a user (and agent, for agent
// keys). It returns the stored record, without an ID's collision check,
// and the secret, which is shown once and never kept.
func NewKey(kind mcpgate.KeyKind, userID, agentID, name string) (*mcpgate.APIKey, string) {
	prefix := mcpgate.UserKeyPrefix
	if kind == mcpgate.KeyAgent {
		prefix = mcpgate.AgentKeyPrefix
	}
	secret := prefix + randomBase62(secretLen)
	return &mcpgate.APIKey{
		ID:      mcpgate.NewID("key_"),
		Kind:    kind,
		UserID:  userID,
		AgentID: agentID,
		Name:    name,
		Hash:    HashSecret(secret),
		Hint:    secret[:len(prefix)+4] + "…",
	}, secret
}

// HashSecret returns the hex SHA-256 of a key's secret. Keys carry 256
// random bits, so a fast hash is safe here, unlike for passwords.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// randomBase62 returns n characters drawn uniformly from base62.
func randomBase62(n int) string {
	out := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		out[i] = base62[v.Int64()]
	}
	return string(out)
}

// wellFormed reports whether secret could be a key NewKey made: a prefix
// and secretLen base62 characters. Malformed keys never reach the store.
func wellFormed(secret string) bool {
	_, rest, ok := strings.Cut(secret, "_")
	if !ok || len(rest) != secretLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !isBase62(rest[i]) {
			return false
		}
	}
	return true
}

// isBase62 reports whether c is one of base62's characters, a digit or
// an ASCII letter (a search of base62 a character was a fifth of the
// authentication of every request).
func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
