package skilledit_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the skill service off the config file's reader (which
// uses it), the stores and the HTTP surface.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard",
		"github.com/mcpgate/mcpgate/registry", "github.com/mcpgate/mcpgate/rest")
}
