package openapi

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library, the root
// package, netguard, registry and the YAML parser.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard", "github.com/mcpgate/mcpgate/registry", "github.com/mcpgate/mcpgate/rest", "go.yaml.in/yaml/v3")
}
