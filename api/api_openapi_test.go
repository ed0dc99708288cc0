package api

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// openAPIOperations returns "METHOD /path" for every operation of the
// embedded OpenAPI document.
func openAPIOperations(tb testing.TB) []string {
	tb.Helper()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		tb.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		tb.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	var ops []string
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				ops = append(ops, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// wildcard matches a {name} path wildcard.
var wildcard = regexp.MustCompile(`\{[a-z]+\}`)

func TestOpenAPIDocumentMatchesRoutes(t *testing.T) {
	f := mustAPIFixture(t)
	var routes []string
	for _, rt := range f.srv.apiRouteTable() {
		routes = append(routes, rt.Pattern())
		// The route is registered: the mux sends a request for it there.
		req := httptest.NewRequest(rt.Method, wildcard.ReplaceAllString(rt.Path, "x"), nil)
		if _, pattern := f.srv.mux.Handler(req); pattern != rt.Pattern() {
			t.Errorf("%s is served by %q", rt.Pattern(), pattern)
		}
	}
	slices.Sort(routes)
	if diff := cmp.Diff(routes, openAPIOperations(t)); diff != "" {
		t.Errorf("routes (-) and openapi.json operations (+) differ:\n%s", diff)
	}
}

func TestOpenAPIDocumentIsComplete(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	defined := doc["components"].(map[string]any)
	for _, ref := range regexp.MustCompile(`"#/components/(\w+)/(\w+)"`).FindAllStringSubmatch(string(openAPIDocument), -1) {
		kind, _ := defined[ref[1]].(map[string]any)
		if _, ok := kind[ref[2]]; !ok {
			t.Errorf("$ref %s/%s points nowhere", ref[1], ref[2])
		}
	}
	paths := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			o := op.(map[string]any)
			if o["operationId"] == nil || o["responses"] == nil {
				t.Errorf("%s %s lacks operationId or responses", method, path)
			}
			if (method == "post" || method == "put" || method == "patch") && o["requestBody"] == nil {
				t.Errorf("%s %s lacks a requestBody", method, path)
			}
		}
	}
}

// jsonFields returns the JSON names of a struct's fields.
func jsonFields(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// checkSchemaFields fails unless each named schema of the OpenAPI
// document has exactly the JSON fields of its Go struct.
func checkSchemaFields(tb testing.TB, structs map[string]any) {
	tb.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		tb.Fatal(err)
	}
	for schema, v := range structs {
		props := slices.Sorted(maps.Keys(doc.Components.Schemas[schema].Properties))
		if diff := cmp.Diff(jsonFields(v), props); diff != "" {
			tb.Errorf("%s: the Go fields (-) and the document's (+) differ:\n%s", schema, diff)
		}
	}
}

func TestOpenAPIBodiesMatchInputs(t *testing.T) {
	checkSchemaFields(t, map[string]any{
		"AgentCreate": agentCreate{}, "AgentPatch": agentPatch{}, "SkillInput": skillInput{},
		"Tool": mcpgate.Tool{}, "Request": mcpgate.Request{}, "KeyCreate": keyCreate{},
		"UserCreate": userCreate{}, "UserPatch": userPatch{}, "ImportRequest": importRequest{}, "KeyPatch": keyPatch{},
		"WebhookCreate": webhookCreate{},
	})
}
