package agent

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the backend on the standard library, the root package,
// netguard, pushsig and h1: no store, bus implementation, server or other
// backend.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard", "github.com/mcpgate/mcpgate/pushsig", "github.com/mcpgate/mcpgate/h1")
}
