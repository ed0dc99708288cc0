package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func TestNewKey(t *testing.T) {
	secretPattern := regexp.MustCompile(`^[0-9A-Za-z]{43}$`)
	tests := []struct {
		kind    mcpgate.KeyKind
		agentID string
		prefix  string
	}{
		{mcpgate.KeyUser, "", mcpgate.UserKeyPrefix},
		{mcpgate.KeyAgent, "a1", mcpgate.AgentKeyPrefix},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			k, secret := NewKey(tt.kind, "u1", tt.agentID, "laptop")
			body, ok := strings.CutPrefix(secret, tt.prefix)
			if !ok || !secretPattern.MatchString(body) {
				t.Errorf("secret %q: want %s and 43 base62 characters", secret, tt.prefix)
			}
			sum := sha256.Sum256([]byte(secret))
			if k.Hash != hex.EncodeToString(sum[:]) {
				t.Errorf("Hash = %q, want hex SHA-256 of the secret", k.Hash)
			}
			if want := secret[:len(tt.prefix)+4] + "…"; k.Hint != want {
				t.Errorf("Hint = %q, want %q", k.Hint, want)
			}
			if strings.Contains(k.Hint, secret[len(tt.prefix)+4:]) || strings.Contains(k.Hint, body[4:12]) {
				t.Errorf("Hint %q reveals the secret", k.Hint)
			}
			if !strings.HasPrefix(k.ID, "key_") || k.Kind != tt.kind || k.UserID != "u1" || k.AgentID != tt.agentID || k.Name != "laptop" {
				t.Errorf("key = %+v", k)
			}
			if k.RevokedAt != nil || k.LastUsedAt != nil {
				t.Errorf("new key has times set: %+v", k)
			}
		})
	}
}

func TestNewKeyIsRandom(t *testing.T) {
	seen := map[string]bool{}
	ids := map[string]bool{}
	used := map[byte]bool{}
	for range 200 {
		k, secret := NewKey(mcpgate.KeyUser, "u1", "", "")
		if seen[secret] || ids[k.ID] {
			t.Fatalf("repeated secret or ID after %d keys", len(seen))
		}
		seen[secret], ids[k.ID] = true, true
		for i := len(mcpgate.UserKeyPrefix); i < len(secret); i++ {
			used[secret[i]] = true
		}
	}
	// 200 keys draw 8600 characters: every one of the 62 shows up unless
	// the alphabet is broken.
	if len(used) != len(base62) {
		t.Errorf("secrets use %d distinct characters, want %d", len(used), len(base62))
	}
}

func TestHashSecret(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		if got := HashSecret(tt.in); got != tt.want {
			t.Errorf("HashSecret(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestWellFormed: the characters a key's secret may hold are base62's,
// and a key NewKey made is well formed until one character is not.
func TestWellFormed(t *testing.T) {
	for c := range 256 {
		if got, want := isBase62(byte(c)), strings.IndexByte(base62, byte(c)) >= 0; got != want {
			t.Errorf("isBase62(%q) = %v, want %v", byte(c), got, want)
		}
	}
	_, secret := NewKey(mcpgate.KeyUser, "u1", "", "test")
	if !wellFormed(secret) {
		t.Fatalf("%q is not well formed", secret)
	}
	for _, bad := range []string{secret[:len(secret)-1] + "-", secret[:len(secret)-1], secret + "a", strings.Replace(secret, "_", "", 1)} {
		if wellFormed(bad) {
			t.Errorf("%q is well formed", bad)
		}
	}
}
