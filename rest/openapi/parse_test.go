package openapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// TestParse covers versions, YAML and JSON, and malformed documents.
func TestParse(t *testing.T) {
	tests := []struct {
		name, data, version, errWant string
	}{
		{"yaml 3.0", "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: {}\n", "3.0.3", ""},
		{"yaml unquoted 3.1", "openapi: 3.1\ninfo: {title: T}\n", "3.1", ""},
		{"json 3.1", `{"openapi": "3.1.0", "info": {"title": "T"}, "paths": {}}`, "3.1.0", ""},
		{"json with BOM", "\xef\xbb\xbf{\"openapi\": \"3.0.0\"}", "3.0.0", ""},
		{"swagger", "swagger: '2.0'\ninfo: {title: T}\n", "", "the document is Swagger 2.0"},
		{"3.2", "openapi: 3.2.0\n", "", `the document is OpenAPI "3.2.0"`},
		{"no version", "info: {title: T}\n", "", "no openapi version field"},
		{"not an object", "- a\n- b\n", "", "not an OpenAPI object"},
		{"bad yaml", "openapi: [\n", "", "neither JSON nor valid YAML"},
		{"bad json", `{"openapi": "3.0.0",}`, "", "not valid JSON"},
		{"two json values", `{"openapi": "3.0.0"} {}`, "", "more than one value"},
		{"paths not an object", "openapi: 3.0.0\npaths: [a]\n", "", "paths is not an object"},
		{"alias bomb", aliasBomb(), "", "nests or expands too far"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.data))
			if tt.errWant != "" {
				mustErrorContain(t, err, mcpgate.EINVALID, tt.errWant)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Version != tt.version {
				t.Errorf("Version = %q, want %q", doc.Version, tt.version)
			}
		})
	}
}

// aliasBomb returns a small YAML document whose aliases expand to billions
// of nodes.
func aliasBomb() string {
	s := "openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 10; i++ {
		prev := "*a" + string(rune('0'+i-1))
		s += "a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + prev + "," + prev + "," + prev + "," + prev + "," + prev + "," + prev + "," + prev + "," + prev + "," + prev + "," + prev + "]\n"
	}
	return s
}

// TestYAMLValues covers how YAML scalars become JSON values.
func TestYAMLValues(t *testing.T) {
	doc := mustParse(t, `openapi: 3.0.0
base: &base {a: 1}
values:
  <<: *base
  int: 0x1F
  float: 1.50
  exp: 1e3
  inf: .inf
  yes: true
  nil: ~
  date: 2024-01-02
  200: numeric key
`)
	got := doc.root["values"]
	want := map[string]any{
		"a": jsonNumber("1"), "int": jsonNumber("31"), "float": jsonNumber("1.50"), "exp": jsonNumber("1e3"),
		"inf": ".inf", "yes": true, "nil": nil, "date": "2024-01-02", "200": "numeric key",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

// TestBaseURL covers servers[0] with variables, relative servers resolved
// against the source URL, and the override.
func TestBaseURL(t *testing.T) {
	tests := []struct {
		name, servers, override, source, want, errWant string
	}{
		{"absolute", "[{url: 'https://api.example.com/v1/'}]", "", "", "https://api.example.com/v1", ""},
		{"variables", "[{url: 'https://{region}.example.com/{version}', variables: {region: {default: eu}, version: {default: v2}}}]", "", "", "https://eu.example.com/v2", ""},
		{"relative to source", "[{url: /api/v3}]", "", "https://docs.example.com/specs/openapi.yaml", "https://docs.example.com/api/v3", ""},
		{"no servers", "[]", "", "http://127.0.0.1:8080/openapi.json", "http://127.0.0.1:8080", ""},
		{"override", "[{url: 'https://api.example.com'}]", "http://127.0.0.1:9/x/", "", "http://127.0.0.1:9/x", ""},
		{"relative without source", "[{url: /v3}]", "", "", "", `servers[0].url "/v3" is not an absolute URL`},
		{"relative to a file", "[{url: /v3}]", "", "specs/openapi.yaml", "", "give a base URL"},
		{"bad override", "[]", "ftp://x", "", "", `the base URL "ftp://x" is not an absolute http or https URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustParse(t, "openapi: 3.0.0\nservers: "+tt.servers+"\npaths: {/x: {get: {responses: {'200': {description: ok}}}}}\n")
			res, err := Import(doc, &Options{BaseURL: tt.override, SourceURL: tt.source})
			if tt.errWant != "" {
				mustErrorContain(t, err, mcpgate.EINVALID, tt.errWant)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.BaseURL != tt.want {
				t.Errorf("BaseURL = %q, want %q", res.BaseURL, tt.want)
			}
		})
	}
}

// jsonNumber is a json.Number, for tables.
func jsonNumber(s string) any { return json.Number(s) }
