package h1

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library.
func TestImports(t *testing.T) {
	deptest.Check(t)
}
