package peer

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library and the root
// package.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate")
}
