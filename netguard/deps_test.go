package netguard

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package on the standard library, so that every
// backend and the config validator may import it.
func TestImports(t *testing.T) {
	for _, path := range mustImports(t) {
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			t.Errorf("netguard imports %s, outside the standard library", path)
		}
	}
}

// mustImports returns the import paths of the package's non-test files.
func mustImports(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		tb.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			tb.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			paths = append(paths, p)
		}
	}
	return paths
}
