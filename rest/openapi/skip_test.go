package openapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// TestMalformedOperations checks that an operation or path item that is
// not an object is skipped with its JSON pointer, its YAML line and why,
// and that the others still import.
func TestMalformedOperations(t *testing.T) {
	paths := `  /a:
    get: [1, 2]
    post: {responses: {'200': {description: ok}}}
  /b/{id}: 7
  /c~d:
    put: null
`
	res := mustImport(t, doc30(paths, ""), nil)
	want := []Skip{
		{Operation: "GET /a", Pointer: "/paths/~1a/get", Line: 6, Reason: "the operation is an array, not an object"},
		{Operation: "/b/{id}", Pointer: "/paths/~1b~1{id}", Line: 8, Reason: "the path item is a number, not an object"},
		{Operation: "PUT /c~d", Pointer: "/paths/~1c~0d/put", Line: 10, Reason: "the operation is null, not an object"},
	}
	if diff := cmp.Diff(want, res.SkippedOperations); diff != "" {
		t.Errorf("SkippedOperations (-want +got):\n%s", diff)
	}
	wantText := []string{
		"GET /a (/paths/~1a/get, line 6): the operation is an array, not an object",
		"/b/{id} (/paths/~1b~1{id}, line 8): the path item is a number, not an object",
		"PUT /c~d (/paths/~1c~0d/put, line 10): the operation is null, not an object",
	}
	if diff := cmp.Diff(wantText, res.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"post_a"}, toolNames(res)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestNothingToImport checks the error when no tool comes out: it lists
// the skipped operations' reasons, speaks of patterns only when some were
// given, and names a missing base URL as well rather than instead.
func TestNothingToImport(t *testing.T) {
	malformed := "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get: [1, 2]\n"
	withServer := "openapi: 3.1.0\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n  /a:\n    get: [1, 2]\n"
	tests := []struct {
		name, doc string
		opts      *Options
		want      []string
		notWant   string
	}{
		{"malformed, no base URL", malformed, nil, []string{
			"every operation was skipped: GET /a (/paths/~1a/get, line 5): the operation is an array, not an object",
			`also, the document's servers[0].url "/" is not an absolute URL`,
		}, "patterns"},
		{"malformed", withServer, nil, []string{
			"no operation to import: every operation was skipped: GET /a (/paths/~1a/get, line 6): the operation is an array, not an object",
		}, "patterns"},
		{"malformed, base URL given", malformed, &Options{BaseURL: "https://api.example.com"}, []string{
			"GET /a (/paths/~1a/get, line 5)",
		}, "servers"},
		{"JSON has no lines", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":[1,2]}}}`, &Options{BaseURL: "https://x.example"}, []string{
			"GET /a (/paths/~1a/get): the operation is an array",
		}, "line"},
		{"no operations", "openapi: 3.1.0\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths: {}\n", nil, []string{
			"no operation to import: the document's paths hold no operations",
		}, "patterns"},
		{"patterns match none", withServer, &Options{Include: []string{"list*"}, Exclude: []string{"x"}}, []string{
			"none of the document's 1 operations matches the patterns (include list*; exclude x)",
		}, "skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(mustParse(t, tt.doc), tt.opts)
			for _, w := range tt.want {
				mustErrorContain(t, err, mcpgate.EINVALID, w)
			}
			if strings.Contains(mcpgate.ErrorMessage(err), tt.notWant) {
				t.Errorf("error %q mentions %q", mcpgate.ErrorMessage(err), tt.notWant)
			}
		})
	}
}

// TestNothingToImportListsAtMostTen checks that the error of a document
// whose every operation is skipped stays short.
func TestNothingToImportListsAtMostTen(t *testing.T) {
	var sb strings.Builder
	for _, p := range "abcdefghijkl" {
		sb.WriteString("  /" + string(p) + ":\n    get: 1\n")
	}
	_, err := Import(mustParse(t, doc30(sb.String(), "")), nil)
	mustErrorContain(t, err, mcpgate.EINVALID, "GET /j (/paths/~1j/get, line 24): the operation is a number, not an object; and 2 more")
}
