package auth

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps key and password handling on the root package and
// argon2: no store, transport or OAuth server.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "golang.org/x/crypto/argon2")
}
