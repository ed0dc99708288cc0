package bus

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the message service on the root package: its stores
// and brokers come in through interfaces.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate")
}
