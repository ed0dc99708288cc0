package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// sdk is the official Go SDK's module path: the conformance fixture the
// tests run, never part of the product.
const sdk = "github.com/modelcontextprotocol/go-sdk"

// No package of the module, outside its tests, imports the go-sdk, even
// indirectly: the gateway speaks MCP with its own client (mcpclient) and
// server (mcp).
func TestProductHasNoSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/mcpgate/mcpgate/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for p := range strings.FieldsSeq(string(out)) {
		if p == sdk || strings.HasPrefix(p, sdk+"/") {
			t.Errorf("the product imports %s; the go-sdk may appear in tests only", p)
		}
	}
}
