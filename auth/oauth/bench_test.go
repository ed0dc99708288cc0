package oauth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkVerifyAccessToken measures the check of an access token on an
// MCP request, the family's revocation state cached.
func BenchmarkVerifyAccessToken(b *testing.B) {
	f := mustFixture(b, nil)
	c := f.mustRegister(b, "none")
	tok := f.mustTokens(b, c, f.agentURL("shop"), "shop").AccessToken
	r := httptest.NewRequest(http.MethodPost, "/shop/mcp", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.oauth.VerifyAccessToken(r, tok); err != nil {
			b.Fatal(err)
		}
	}
}
