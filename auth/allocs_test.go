package auth

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// agentKeyField is how net/http keys HeaderAgentKey.
func TestAgentKeyField(t *testing.T) {
	if got := http.CanonicalHeaderKey(HeaderAgentKey); got != agentKeyField {
		t.Errorf("agentKeyField = %q, want %q", agentKeyField, got)
	}
}

// A cached key authenticates a request with one allocation, the
// credential: the cache is keyed by the secret's hash as bytes (not its
// hex form) and the agent key header is read under its canonical name.
func TestAuthenticateCachedAllocs(t *testing.T) {
	keys := &fakeKeys{}
	a := NewAuthenticator(keys, nil)
	for _, kind := range []mcpgate.KeyKind{mcpgate.KeyUser, mcpgate.KeyAgent} {
		_, secret := keys.add(kind, "u1", "a1")
		reqs := []*http.Request{newRequest("Bearer "+secret, "")}
		if kind == mcpgate.KeyAgent {
			reqs = append(reqs, newRequest("", secret), newRequest("Bearer "+secret, secret))
		}
		for _, r := range reqs {
			if _, err := a.Authenticate(r); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(100, func() { a.Authenticate(r) }); n > 1 {
				t.Errorf("%s, %v: Authenticate allocates %v times, want 1", kind, r.Header, n)
			}
		}
	}
}

// hashOf is HashSecret's hash, for secrets of any length.
func TestHashOf(t *testing.T) {
	for _, secret := range []string{"", "bak_x", strings.Repeat("k", 128), strings.Repeat("k", 129), strings.Repeat("k", 1000)} {
		h := hashOf(secret)
		if got := hex.EncodeToString(h[:]); got != HashSecret(secret) {
			t.Errorf("hashOf(%d bytes) = %s, want %s", len(secret), got, HashSecret(secret))
		}
	}
}
