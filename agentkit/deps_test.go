package agentkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps agentkit on the standard library, the root
// package, pushsig and h1 (the HTTP/1.1 client transport), all the way
// down: an agent built on it pulls in nothing else of the gateway.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/mcpgate/mcpgate":          true,
		"github.com/mcpgate/mcpgate/pushsig":  true,
		"github.com/mcpgate/mcpgate/h1":       true,
		"github.com/mcpgate/mcpgate/agentkit": true,
	}
	for _, p := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !allowed[p] {
			t.Errorf("agentkit depends on %s", p)
		}
	}
}
