package ratelimit

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the limiters on the root package and x/time/rate: no
// store, transport or pipeline.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "golang.org/x/time/rate")
}
