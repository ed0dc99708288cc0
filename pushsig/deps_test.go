package pushsig

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library, so that agents
// can use it without the rest of the module.
func TestImports(t *testing.T) {
	deptest.Check(t)
}
