package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestOAuthChallengeInvalidToken: a 401 for a credential that was
// presented and refused says error="invalid_token" (RFC 6750 §3); one for
// no credential does not; one for an agent that is not MCP-enabled, whose
// token is fine, does not either, so that the client does not throw the
// token away and loop through authorization.
func TestOAuthChallengeInvalidToken(t *testing.T) {
	f := mustOAuthFixture(t)
	shop := f.mustToken(t, f.base+"/shop/mcp", "shop")
	forNotes := f.mustToken(t, f.base+"/notes/mcp", "notes")
	for _, tt := range []struct {
		name, path, bearer string
		invalid            bool
	}{
		{"no credential", "/shop/mcp", "", false},
		{"token for another agent", "/shop/mcp", forNotes, true},
		{"garbage token", "/shop/mcp", "a.b.c", true},
		{"unknown API key", "/shop/mcp", "oag_nosuchkey", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call(t, http.MethodPost, tt.path, tt.bearer)
			got := r.header.Get("WWW-Authenticate")
			if r.status != http.StatusUnauthorized || !strings.Contains(got, `resource_metadata=`) {
				t.Fatalf("%d %q (%s), want 401 with a challenge", r.status, got, r.body)
			}
			if strings.Contains(got, `error="invalid_token"`) != tt.invalid {
				t.Errorf("WWW-Authenticate = %q; invalid_token wanted: %v", got, tt.invalid)
			}
			if tt.invalid && !strings.Contains(got, `error_description="`) {
				t.Errorf("WWW-Authenticate = %q, want an error_description", got)
			}
		})
	}
	t.Run("another scheme", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, f.base+"/shop/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", "pw")
		r := doRequest(t, req)
		if got := r.header.Get("WWW-Authenticate"); r.status != http.StatusUnauthorized || got == "" || strings.Contains(got, "error=") {
			t.Errorf("Basic credentials: %d %q, want 401 with a challenge without an error code", r.status, got)
		}
	})
	t.Run("agent not MCP-enabled", func(t *testing.T) {
		ctx := context.Background()
		a, err := f.store.FindAgent(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		a.MCPEnabled = false
		if err := f.store.UpdateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := f.reg.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		r := f.call(t, http.MethodPost, "/shop/mcp", shop)
		got := r.header.Get("WWW-Authenticate")
		if r.status != http.StatusUnauthorized || strings.Contains(got, "invalid_token") {
			t.Errorf("%d %q (%s), want 401 without invalid_token", r.status, got, r.body)
		}
	})
}

func TestChallengeText(t *testing.T) {
	if got := challengeText("a \"b\" \\c\r\né"); got != `a 'b' ?c???` {
		t.Errorf("challengeText = %q", got)
	}
}
