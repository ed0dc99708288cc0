package config

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the config file's reader to reading: the skill checks
// are skilledit's, the URL checks netguard's through it.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/auth",
		"github.com/mcpgate/mcpgate/rest", "github.com/mcpgate/mcpgate/rest/openapi",
		"github.com/mcpgate/mcpgate/skilledit", "go.yaml.in/yaml/v3")
}
