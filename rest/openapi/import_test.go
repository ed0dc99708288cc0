package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// TestToolNames covers naming from operationId, from method and path,
// sanitizing, truncating and collisions.
func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	paths := `  /pets/{petId}:
    get: {responses: {'200': {description: ok}}}
    delete: {operationId: 'remove pet!', responses: {'204': {description: ok}}}
  /a:
    get: {operationId: same, responses: {'200': {description: ok}}}
    post: {operationId: same, responses: {'200': {description: ok}}}
  /b:
    get: {operationId: same, responses: {'200': {description: ok}}}
  /c:
    get: {operationId: ` + long + `, responses: {'200': {description: ok}}}
    put: {operationId: ` + long + `, responses: {'200': {description: ok}}}
  /:
    get: {operationId: 'ü', responses: {'200': {description: ok}}}
`
	res := mustImport(t, doc30(paths, ""), nil)
	want := []string{
		"get", "remove_pet_", "get_pets_petId", "same", "same_2", "same_3",
		long[:64], long[:62] + "_2",
	}
	got := map[string]string{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool.Request.Method + " " + tool.Request.Path
	}
	wantAt := map[string]string{
		"get": "GET /", "remove_pet_": "DELETE /pets/{petId}", "get_pets_petId": "GET /pets/{petId}",
		"same": "GET /a", "same_2": "POST /a", "same_3": "GET /b", long[:64]: "GET /c", long[:62] + "_2": "PUT /c",
	}
	if diff := cmp.Diff(wantAt, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if len(res.Tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(res.Tools), len(want))
	}
}

// TestIncludeExclude covers the patterns on names, operationIds and
// "METHOD /path".
func TestIncludeExclude(t *testing.T) {
	paths := `  /pets:
    get: {operationId: listPets, responses: {'200': {description: ok}}}
    post: {operationId: createPet, responses: {'200': {description: ok}}}
  /pets/{id}:
    get: {operationId: showPet, responses: {'200': {description: ok}}}
    delete: {responses: {'200': {description: ok}}}
  /stores:
    get: {operationId: listStores, responses: {'200': {description: ok}}}
`
	tests := []struct {
		name             string
		include, exclude []string
		want             []string
	}{
		{"all", nil, nil, []string{"createPet", "delete_pets_id", "listPets", "listStores", "showPet"}},
		{"by name", []string{"list*"}, nil, []string{"listPets", "listStores"}},
		{"by method and path", []string{"GET /pets", "GET /pets/*"}, nil, []string{"listPets", "showPet"}},
		{"by generated name", []string{"delete_*"}, nil, []string{"delete_pets_id"}},
		{"exclude after include", []string{"* /pets", "* /pets/*"}, []string{"DELETE /*/*", "createPet"}, []string{"listPets", "showPet"}},
		{"exclude only", nil, []string{"*Pet*"}, []string{"delete_pets_id", "listStores"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustImport(t, doc30(paths, ""), &Options{Include: tt.include, Exclude: tt.exclude})
			if diff := cmp.Diff(tt.want, toolNames(res)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("nothing selected", func(t *testing.T) {
		_, err := Import(mustParse(t, doc30(paths, "")), &Options{Include: []string{"nothing"}})
		mustErrorContain(t, err, mcpgate.EINVALID, "none of the document's 5 operations matches")
	})
	t.Run("bad pattern", func(t *testing.T) {
		_, err := Import(mustParse(t, doc30(paths, "")), &Options{Exclude: []string{"[a"}})
		mustErrorContain(t, err, mcpgate.EINVALID, `pattern "[a" is malformed`)
	})
}

// TestParameters covers locations, required flags, renaming on clashes,
// path-level parameters, $ref parameters and ignored headers.
func TestParameters(t *testing.T) {
	paths := `  /items/{id}:
    parameters:
      - {name: id, in: path, schema: {type: integer}}
      - {$ref: '#/components/parameters/Trace'}
    get:
      operationId: getItem
      parameters:
        - {name: id, in: query, schema: {type: string}, description: a query id}
        - {name: id, in: header, schema: {type: string}}
        - {name: 'page[size]', in: query, required: true, schema: {type: integer}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: Trace-Id, in: header, required: true, schema: {type: string}, description: "overrides the path item's"}
      responses: {'200': {description: ok}}
`
	components := `  parameters:
    Trace: {name: Trace-Id, in: header, schema: {type: string}}
`
	tool := mustTool(t, mustImport(t, doc30(paths, components), nil), "getItem")
	wantReq := &mcpgate.Request{
		Method: "GET", Path: "/items/{id}",
		Query:   map[string]string{"id": "{query_id}", "page[size]": "{page_size_}"},
		Headers: map[string]string{"id": "{header_id}", "Trace-Id": "{Trace-Id}"},
	}
	if diff := cmp.Diff(wantReq, tool.Request); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	want := `{"type":"object","required":["Trace-Id","id","page_size_"],"properties":{
		"id":{"type":"integer"},
		"query_id":{"type":"string","description":"a query id"},
		"header_id":{"type":"string"},
		"page_size_":{"type":"integer"},
		"Trace-Id":{"type":"string","description":"overrides the path item's"}}}`
	if diff := cmp.Diff(mustDecode(t, json.RawMessage(want)), mustDecode(t, tool.InputSchema)); diff != "" {
		t.Errorf("input schema (-want +got):\n%s", diff)
	}
}

// TestRequiredCookieSkips checks that an operation needing a cookie is
// skipped with its reason, and that the others still import.
func TestRequiredCookieSkips(t *testing.T) {
	paths := `  /a:
    get:
      parameters: [{name: sid, in: cookie, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
  /b:
    get: {responses: {'200': {description: ok}}}
`
	res := mustImport(t, doc30(paths, ""), nil)
	// Each skip now names the operation's JSON pointer and YAML line too.
	if diff := cmp.Diff([]string{`GET /a (/paths/~1a/get, line 6): cookie parameter "sid" is not supported`}, res.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"get_b"}, toolNames(res)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestRequestBodies covers merging an object body, a clash that keeps the
// body whole, arrays, other JSON media types and unsupported bodies.
func TestRequestBodies(t *testing.T) {
	components := `  schemas:
    Pet:
      type: object
      required: [name]
      properties: {name: {type: string}, tag: {type: string}}
  requestBodies:
    PetBody:
      required: true
      content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}
`
	tests := []struct {
		name, op   string
		wantBody   string // the request body's JSON form
		wantSchema string
		wantHeader map[string]string
	}{
		{"merged", `post: {operationId: op, requestBody: {$ref: '#/components/requestBodies/PetBody'}, responses: {'201': {description: ok}}}`,
			`["name","tag"]`,
			`{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"tag":{"type":"string"}}}`, nil},
		{"optional body keeps properties optional", `post: {operationId: op, requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}, responses: {'201': {description: ok}}}`,
			`["name","tag"]`,
			`{"type":"object","properties":{"name":{"type":"string"},"tag":{"type":"string"}}}`, nil},
		{"clash keeps the body whole", `post: {operationId: op, parameters: [{name: name, in: query, schema: {type: string}}], requestBody: {$ref: '#/components/requestBodies/PetBody'}, responses: {'201': {description: ok}}}`,
			`"{body}"`,
			`{"type":"object","required":["body"],"properties":{"name":{"type":"string"},"body":{"$ref":"#/$defs/Pet"}},
			  "$defs":{"Pet":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"tag":{"type":"string"}}}}}`, nil},
		{"array", `put: {operationId: op, requestBody: {description: the pets, required: true, content: {application/json: {schema: {type: array, items: {type: string}}}}}, responses: {'200': {description: ok}}}`,
			`"{body}"`,
			`{"type":"object","required":["body"],"properties":{"body":{"type":"array","items":{"type":"string"},"description":"the pets"}}}`, nil},
		{"a parameter named body", `post: {operationId: op, parameters: [{name: body, in: query, schema: {type: string}}], requestBody: {content: {application/json: {schema: {type: string}}}}, responses: {'200': {description: ok}}}`,
			`"{request_body}"`,
			`{"type":"object","properties":{"body":{"type":"string"},"request_body":{"type":"string"}}}`, nil},
		{"vendor JSON", `patch: {operationId: op, requestBody: {content: {application/merge-patch+json: {schema: {type: object, additionalProperties: true}}, text/plain: {}}}, responses: {'200': {description: ok}}}`,
			`"{body}"`,
			`{"type":"object","properties":{"body":{"type":"object","additionalProperties":true}}}`,
			map[string]string{"Content-Type": "application/merge-patch+json"}},
		{"optional binary body is left out", `post: {operationId: op, requestBody: {content: {application/octet-stream: {schema: {type: string, format: binary}}}}, responses: {'200': {description: ok}}}`,
			`"none"`, `{"type":"object","properties":{}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustImport(t, doc30("  /pets:\n    "+tt.op+"\n", components), nil)
			tool := mustTool(t, res, "op")
			body, err := json.Marshal(tool.Request.Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tt.wantBody {
				t.Errorf("body = %s, want %s", body, tt.wantBody)
			}
			if diff := cmp.Diff(mustDecode(t, json.RawMessage(tt.wantSchema)), mustDecode(t, tool.InputSchema)); diff != "" {
				t.Errorf("input schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHeader, tool.Request.Headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("required multipart body skips", func(t *testing.T) {
		paths := "  /up:\n    post: {requestBody: {required: true, content: {multipart/form-data: {schema: {type: object}}}}, responses: {'200': {description: ok}}}\n  /ok:\n    get: {responses: {'200': {description: ok}}}\n"
		res := mustImport(t, doc30(paths, ""), nil)
		// Each skip now names the operation's JSON pointer and YAML line too.
		want := []string{"POST /up (/paths/~1up/post, line 6): the request body (multipart/form-data) is not JSON, which is not supported"}
		if diff := cmp.Diff(want, res.Skipped); diff != "" {
			t.Errorf("Skipped (-want +got):\n%s", diff)
		}
	})
}

// mustErrorContain fails the test unless err has the code and its message
// contains want.
func mustErrorContain(tb testing.TB, err error, code, want string) {
	tb.Helper()
	if mcpgate.ErrorCode(err) != code || !strings.Contains(mcpgate.ErrorMessage(err), want) {
		tb.Fatalf("got error %v, want code %s containing %q", err, code, want)
	}
}
