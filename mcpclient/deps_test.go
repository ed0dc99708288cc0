package mcpclient

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// The client imports the root package and the standard library only.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate")
}
