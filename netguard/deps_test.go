package netguard

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library, so that every
// backend and the config validator may import it.
func TestImports(t *testing.T) {
	deptest.Check(t)
}
