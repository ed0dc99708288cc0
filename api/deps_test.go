package api

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the management API on the root package, the checks and
// edits of skills (skilledit, rest/openapi), auth (new keys and
// passwords) and mcp's status mapping: no store implementation, backend, pipeline, registry, server or
// HandsAI surface.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/auth",
		"github.com/mcpgate/mcpgate/skilledit", "github.com/mcpgate/mcpgate/rest/openapi", "github.com/mcpgate/mcpgate/mcp")
}
