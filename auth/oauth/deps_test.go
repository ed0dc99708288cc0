package oauth

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the authorization server on the standard library, the
// root package, auth, netguard and the JWT library: no store, transport,
// server or backend.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/auth", "github.com/mcpgate/mcpgate/netguard", "github.com/golang-jwt/jwt/v5")
}
