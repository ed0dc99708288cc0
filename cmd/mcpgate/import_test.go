package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIImportWarnsOfSkips checks that `mcpgate import openapi` warns of
// each skipped operation with its JSON pointer and line, and that a
// document with nothing importable fails saying why.
func TestCLIImportWarnsOfSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init")
	mustRunCLI(t, dir, "user", "create", "alice")
	mustSeedAgent(t, dir, "alice", "inv")
	spec := filepath.Join(t.TempDir(), "api.yaml")
	doc := "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get: [1, 2]\n"
	writeSpecFile(t, spec, doc+"  /b:\n    get: {responses: {'200': {description: ok}}}\n")
	args := []string{"import", "openapi", spec, "--agent", "inv", "--skill", "api", "--base-url", "https://api.example.com", "--data-dir", dir}
	out, errOut, err := runCLI(t, nil, args...)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	want := "warning: skipped GET /a (/paths/~1a/get, line 5): the operation is an array, not an object\n"
	if errOut != want || !strings.Contains(out, "get_b") {
		t.Errorf("import printed\n%s\nand on stderr\n%s\nwant the tool get_b and on stderr\n%s", out, errOut, want)
	}

	writeSpecFile(t, spec, doc)
	_, _, err = runCLI(t, nil, args...)
	if msg := errorText(err); !strings.Contains(msg, "every operation was skipped: GET /a (/paths/~1a/get, line 5)") || strings.Contains(msg, "patterns") {
		t.Errorf("import of nothing: %v", err)
	}
}

// writeSpecFile writes data to name or fails the test.
func writeSpecFile(tb testing.TB, name, data string) {
	tb.Helper()
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		tb.Fatal(err)
	}
}
