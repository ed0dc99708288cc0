package rest

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the backend on the standard library, the root package,
// netguard, h1 and internal/lazyctx: no other backend, store or server.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard", "github.com/mcpgate/mcpgate/h1", "github.com/mcpgate/mcpgate/internal/lazyctx")
}
