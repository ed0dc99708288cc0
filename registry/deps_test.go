package registry

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the registry on the root package and the JSON Schema
// library: no store, backend or transport.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/santhosh-tekuri/jsonschema/v6")
}
