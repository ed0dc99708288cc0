// Package deptest checks, in a package's tests, that the package keeps to
// the imports its design allows. It imports the standard library only, so
// that packages bound to the standard library may use it in their tests.
package deptest

import (
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Check fails tb for each import, in the non-test Go files of the current
// directory (the package under test), that is neither in the standard
// library nor one of allowed.
func Check(tb testing.TB, allowed ...string) {
	tb.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		for _, p := range imports(tb, e.Name()) {
			if !standard(p) && !slices.Contains(allowed, p) {
				tb.Errorf("%s imports %s, which this package's design does not allow", e.Name(), p)
			}
		}
	}
}

// imports returns the import paths of one file.
func imports(tb testing.TB, file string) []string {
	tb.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		tb.Fatal(err)
	}
	paths := make([]string, 0, len(f.Imports))
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		paths = append(paths, p)
	}
	return paths
}

// standard reports whether an import path is in the standard library:
// its first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
