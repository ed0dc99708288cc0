package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport parses and imports arbitrary documents: neither may panic,
// and whatever Import returns must pass the registry's checks.
func FuzzImport(f *testing.F) {
	seeds := []string{
		doc30("  /a/{id}:\n    get: {parameters: [{name: id, in: path}], responses: {'200': {description: ok}}}\n", ""),
		`{"openapi":"3.1.0","servers":[{"url":"https://x.example"}],"paths":{"/x":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}},"responses":{"default":{"$ref":"#/components/responses/R"}}}}},"components":{"schemas":{"A":{"type":"object","properties":{"a":{"$ref":"#/components/schemas/A"}}}},"responses":{"R":{"$ref":"#/components/responses/R"}}}}`,
		"openapi: 3.0.0\nservers: [{url: 'https://x.example'}]\npaths: {/x: {get: {parameters: [{$ref: '#/paths/~1x/get/parameters/0'}]}}}\n",
	}
	for _, name := range []string{"petstore.yaml"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			seeds = append(seeds, string(data))
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err != nil {
			return
		}
		res, err := Import(doc, &Options{Skill: "fuzz", BaseURL: "https://api.example.com", Exclude: []string{"x*"}})
		if err != nil {
			return
		}
		mustCheck(t, res)
	})
}
