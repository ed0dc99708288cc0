package ui

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the dashboard on the root package, auth and
// the registry's tables: no store implementation, backend, pipeline,
// server, management API or OAuth server, which it reaches through
// Sessions.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/auth",
		"github.com/mcpgate/mcpgate/registry")
}
