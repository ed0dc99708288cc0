package handsai

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the surface on the root package, the mcp package's
// JSON-RPC decoder and the registry's tables: no store, backend, pipeline,
// server or management API.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/mcp", "github.com/mcpgate/mcpgate/registry")
}
