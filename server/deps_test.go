package server

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the HTTP front on the root package, mcp, the
// registry's tables and auth: no store, backend, pipeline, config,
// management API or HandsAI surface, which it mounts through interfaces.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/mcp",
		"github.com/mcpgate/mcpgate/registry", "github.com/mcpgate/mcpgate/auth")
}
