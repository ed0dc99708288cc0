package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// petstoreSpec is a real OpenAPI 3.0 document kept by the importer's tests.
const petstoreSpec = "../rest/openapi/testdata/petstore.yaml"

// openapiFile is a config whose skill imports a document.
func openapiFile(t *testing.T, skillExtra string) string {
	t.Helper()
	spec, err := filepath.Abs(petstoreSpec)
	if err != nil {
		t.Fatal(err)
	}
	return `users: [{name: alice}]
agents:
  - id: pets
    owner: alice
    mcp_enabled: true
    skills:
      - name: store
        kind: rest
        openapi: ` + spec + `
        allow_private: true
` + skillExtra
}

func TestParseOpenAPISkill(t *testing.T) {
	env := map[string]string{"STORE_API_KEY": "k", "STORE_PETSTORE_AUTH": "t"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	file := openapiFile(t, `        base_url: http://127.0.0.1:9/api/v3
        headers: {Authorization: "Bearer ${env:STORE_PETSTORE_AUTH}"}
        include: ["*Pet*"]
        exclude: [deletePet]
`)
	c, err := Parse("mcpgate.yaml", []byte(file), lookup)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Agents[0].Skills[0]
	if s.BaseURL != "http://127.0.0.1:9/api/v3" || s.Headers["api_key"] != "${env:STORE_API_KEY}" {
		t.Errorf("skill base URL %q, headers %v", s.BaseURL, s.Headers)
	}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "getPetById") || strings.Contains(got, "deletePet") || strings.Contains(got, "getOrderById") {
		t.Errorf("tools = %s; want the *Pet* operations but deletePet", got)
	}
}

func TestParseOpenAPIErrors(t *testing.T) {
	lookup := func(string) (string, bool) { return "set", true }
	tests := []struct{ name, extra, want string }{
		{"tools too", "        tools: []\n", "agents[0].skills[0].tools: a skill with openapi gets its tools from the document"},
		{"include without openapi", "", ""},
		{"secret variable missing", "", "STORE_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, look := openapiFile(t, tt.extra), lookup
			switch tt.name {
			case "include without openapi":
				i := strings.Index(file, "openapi: ")
				j := i + strings.Index(file[i:], "\n")
				file = file[:i] + "include: [x]" + file[j:]
				tt.want = "agents[0].skills[0].include: include and exclude pick the operations of an openapi document"
			case "secret variable missing":
				look = func(string) (string, bool) { return "", false }
			}
			_, err := Parse("mcpgate.yaml", []byte(file), look)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	missing := strings.Replace(openapiFile(t, ""), "petstore.yaml", "no-such-spec.yaml", 1)
	_, err := Parse("mcpgate.yaml", []byte(missing), lookup)
	if err == nil || !strings.HasPrefix(err.Error(), "mcpgate.yaml:9: agents[0].skills[0].openapi: ") || mcpgate.ErrorCode(err) != mcpgate.EINVALID {
		t.Errorf("missing document: %v", err)
	}
	if _, statErr := os.Stat(petstoreSpec); statErr != nil {
		t.Fatal(statErr)
	}
}
