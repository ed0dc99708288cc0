package agent

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the backend on the standard library, the root package,
// netguard and pushsig: no store, bus implementation, server or other
// backend.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/mcpgate/mcpgate":          true,
		"github.com/mcpgate/mcpgate/netguard": true,
		"github.com/mcpgate/mcpgate/pushsig":  true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && !allowed[p] {
				t.Errorf("%s imports %s", e.Name(), p)
			}
		}
	}
}
