package mcp

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the transport on the standard library, the root package
// and internal/lazyctx: no server, pipeline, store or backend.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/internal/lazyctx")
}
