// Package deptest checks, in a package's tests, that the package keeps to
// the imports its design allows. It imports the standard library only, so
// that packages bound to the standard library may use it in their tests.
package deptest

import (
	"go/ast"
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
	for _, file := range sourceFiles(tb) {
		for _, p := range imports(tb, file) {
			if !standard(p) && !slices.Contains(allowed, p) {
				tb.Errorf("%s imports %s, which this package's design does not allow", file, p)
			}
		}
	}
}

// CheckNames fails tb for each identifier, in the non-test Go files of the
// current directory, spelled as one of names: a type (mcpgate.Credential),
// a field (call.Credential), a variable. It keeps a package from reaching
// what its design keeps from it even through a package it may import.
func CheckNames(tb testing.TB, names ...string) {
	tb.Helper()
	for _, file := range sourceFiles(tb) {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && slices.Contains(names, id.Name) {
				tb.Errorf("%s uses %s, which this package's design keeps from it", file, id.Name)
			}
			return true
		})
	}
}

// sourceFiles returns the names of the non-test Go files of the current
// directory.
func sourceFiles(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		tb.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			files = append(files, e.Name())
		}
	}
	return files
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
