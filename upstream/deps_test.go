package upstream

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// The upstream backend keeps to its design's imports: the go-sdk is a test
// fixture, never part of it. On Windows, stdio children run in a job
// object (golang.org/x/sys/windows).
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard", "github.com/mcpgate/mcpgate/h1", "github.com/mcpgate/mcpgate/mcpclient", "github.com/mcpgate/mcpgate/internal/lazyctx",
		"golang.org/x/sys/windows")
}
