package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenTool is what a golden file records of a tool.
type goldenTool struct {
	Name            string           `json:"name"`
	Title           string           `json:"title,omitempty"`
	Description     string           `json:"description"`
	InputSchema     json.RawMessage  `json:"inputSchema"`
	HasOutputSchema bool             `json:"hasOutputSchema"`
	Annotations     json.RawMessage  `json:"annotations,omitempty"`
	Request         *mcpgate.Request `json:"request"`
}

// golden is what a golden file records of an import.
type golden struct {
	BaseURL string            `json:"baseURL"`
	Headers map[string]string `json:"headers,omitempty"`
	Secrets []string          `json:"secrets,omitempty"`
	Skipped []string          `json:"skipped,omitempty"`
	Tools   []goldenTool      `json:"tools"`
}

// TestGolden imports the real documents under testdata and compares the
// tools with the golden files; go test -update rewrites them.
func TestGolden(t *testing.T) {
	tests := []struct {
		file, skill string
		version     string
		tools       int
	}{
		{"petstore.yaml", "petstore", "3.0.4", 19},
		{"discourse.yaml", "discourse", "3.1.0", 93},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc := mustParse(t, string(data))
			if doc.Version != tt.version {
				t.Errorf("Version = %q, want %q", doc.Version, tt.version)
			}
			res, err := Import(doc, &Options{Skill: tt.skill})
			if err != nil {
				t.Fatal(err)
			}
			mustCheck(t, res)
			if len(res.Tools) != tt.tools {
				t.Errorf("got %d tools, want %d", len(res.Tools), tt.tools)
			}
			checkGolden(t, filepath.Join("testdata", tt.skill+".golden.json"), encodeGolden(t, res))
		})
	}
}

// encodeGolden encodes what a golden file records of res.
func encodeGolden(tb testing.TB, res *Result) []byte {
	tb.Helper()
	g := golden{BaseURL: res.BaseURL, Headers: res.Headers, Secrets: res.Secrets, Skipped: res.Skipped}
	for _, tool := range res.Tools {
		g.Tools = append(g.Tools, goldenTool{
			Name: tool.Name, Title: tool.Title, Description: tool.Description, InputSchema: tool.InputSchema,
			HasOutputSchema: len(tool.OutputSchema) > 0, Annotations: tool.Annotations, Request: tool.Request,
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// checkGolden compares got with the golden file, or rewrites it.
func checkGolden(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// TestImportIsDeterministic imports the larger document twice and expects
// the same bytes.
func TestImportIsDeterministic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "discourse.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first := encodeGolden(t, mustImport(t, string(data), nil))
	second := encodeGolden(t, mustImport(t, string(data), nil))
	if !bytes.Equal(first, second) {
		t.Error("two imports of the same document differ")
	}
}

// TestConcurrentImports imports one Document from several goroutines:
// Import must never write to the document.
func TestConcurrentImports(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := mustParse(t, string(data))
	want := encodeGolden(t, mustImport(t, string(data), nil))
	results := make(chan []byte, 4)
	for range 4 {
		go func() {
			res, err := Import(doc, nil)
			if err != nil {
				results <- []byte(err.Error())
				return
			}
			results <- encodeGolden(t, res)
		}()
	}
	for range 4 {
		if got := <-results; !bytes.Equal(got, want) {
			t.Errorf("a concurrent import differs:\n%s", got)
		}
	}
}
