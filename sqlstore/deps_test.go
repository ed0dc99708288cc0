package sqlstore

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the store free of drivers and of every mcpgate
// package but the root one and the batch queue of group commit.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/internal/batch")
}
