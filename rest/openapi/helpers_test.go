package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// mustParse parses a document or fails the test.
func mustParse(tb testing.TB, data string) *Document {
	tb.Helper()
	doc, err := Parse([]byte(data))
	if err != nil {
		tb.Fatalf("Parse: %v", err)
	}
	return doc
}

// mustImport parses and imports a document, fails the test on an error,
// and checks that the tools pass the registry as one skill.
func mustImport(tb testing.TB, data string, opts *Options) *Result {
	tb.Helper()
	res, err := Import(mustParse(tb, data), opts)
	if err != nil {
		tb.Fatalf("Import: %v", err)
	}
	mustCheck(tb, res)
	return res
}

// mustCheck fails the test unless the result's tools pass registry.Check
// as one skill.
func mustCheck(tb testing.TB, res *Result) {
	tb.Helper()
	s := &mcpgate.Skill{AgentID: "a", Name: "s", Kind: mcpgate.SkillREST, BaseURL: res.BaseURL, Headers: res.Headers, Tools: res.Tools}
	if err := registry.Check([]*mcpgate.Skill{s}); err != nil {
		tb.Fatalf("registry.Check: %v", err)
	}
}

// mustTool returns the result's tool with the name.
func mustTool(tb testing.TB, res *Result, name string) *mcpgate.Tool {
	tb.Helper()
	for _, t := range res.Tools {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("no tool %q among %v", name, toolNames(res))
	return nil
}

// toolNames lists the result's tool names.
func toolNames(res *Result) []string {
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

// mustDecode decodes raw into a generic value, for comparisons.
func mustDecode(tb testing.TB, raw json.RawMessage) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// doc30 wraps paths (YAML, indented by two) and components in a minimal
// OpenAPI 3.0 document.
func doc30(paths, components string) string {
	return docVersion("3.0.3", paths, components)
}

// docVersion is doc30 for any version.
func docVersion(version, paths, components string) string {
	var sb strings.Builder
	sb.WriteString("openapi: " + version + "\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com/v1'}]\npaths:\n")
	sb.WriteString(paths)
	if components != "" {
		sb.WriteString("\ncomponents:\n" + components)
	}
	return sb.String()
}
