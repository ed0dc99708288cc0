package openapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate/registry"
)

// TestDialect covers the 3.0 keywords that 2020-12 says differently, and
// checks that 3.1 schemas pass through unchanged.
func TestDialect(t *testing.T) {
	tests := []struct {
		name, version, schema, want string
	}{
		{"nullable type", "3.0.3", `{type: string, nullable: true}`, `{"type":["string","null"]}`},
		{"nullable enum", "3.0.3", `{type: string, enum: [a, b], nullable: true}`, `{"type":["string","null"],"enum":["a","b",null]}`},
		{"nullable ref", "3.0.3", `{allOf: [{$ref: '#/components/schemas/Leaf'}], nullable: true}`,
			`{"anyOf":[{"type":"null"},{"allOf":[{"$ref":"#/$defs/Leaf"}]}]}`},
		{"boolean exclusive bounds", "3.0.3", `{type: number, minimum: 1, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false}`,
			`{"type":"number","exclusiveMinimum":1,"maximum":9}`},
		{"example", "3.0.3", `{type: integer, example: 3}`, `{"type":"integer","examples":[3]}`},
		{"dropped keywords", "3.0.3", `{type: object, discriminator: {propertyName: kind}, xml: {name: x}, externalDocs: {url: 'https://x'}, x-internal: true, properties: {kind: {type: string}}}`,
			`{"type":"object","properties":{"kind":{"type":"string"}}}`},
		{"3.1 type list and numeric bounds", "3.1.0", `{type: [integer, 'null'], exclusiveMinimum: 0, examples: [1, 2]}`,
			`{"type":["integer","null"],"exclusiveMinimum":0,"examples":[1,2]}`},
		{"3.1 const and $ref siblings", "3.1.0", `{$ref: '#/components/schemas/Leaf', description: a leaf}`,
			`{"$ref":"#/$defs/Leaf","description":"a leaf"}`},
		{"tuple items", "3.0.3", `{type: array, items: [{type: string}, {type: integer}], additionalItems: false}`,
			`{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`},
		{"data keeps $ref keys", "3.1.0", `{type: object, default: {$ref: not-a-ref}, enum: [{$ref: x}]}`,
			`{"type":"object","default":{"$ref":"not-a-ref"},"enum":[{"$ref":"x"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := "  /x:\n    get:\n      operationId: op\n      parameters: [{name: v, in: query, schema: " + tt.schema + "}]\n      responses: {'200': {description: ok}}\n"
			components := "  schemas:\n    Leaf: {type: string}\n"
			tool := mustTool(t, mustImport(t, docVersion(tt.version, paths, components), nil), "op")
			var in struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(mustDecode(t, json.RawMessage(tt.want)), mustDecode(t, in.Properties["v"])); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefCycles checks that recursive and mutually recursive schemas
// become $defs that refer to each other, compile, and validate.
func TestRefCycles(t *testing.T) {
	components := `  schemas:
    Node:
      type: object
      properties:
        value: {type: integer}
        children: {type: array, items: {$ref: '#/components/schemas/Node'}}
        owner: {$ref: '#/components/schemas/Person'}
    Person:
      type: object
      properties:
        name: {type: string}
        best: {$ref: '#/components/schemas/Node'}
    Self: {$ref: '#/components/schemas/Self'}
`
	paths := `  /tree:
    post:
      operationId: putTree
      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/Node'}}}}
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Node'}}}}}
  /self:
    get:
      operationId: getSelf
      parameters: [{name: s, in: query, schema: {$ref: '#/components/schemas/Self'}}]
      responses: {'200': {description: ok}}
`
	res := mustImport(t, doc30(paths, components), nil)
	tool := mustTool(t, res, "putTree")
	var in struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Defs["Node"]; !ok {
		t.Errorf("$defs = %v, want Node and Person", in.Defs)
	}
	if _, ok := in.Defs["Person"]; !ok {
		t.Errorf("$defs = %v, want Node and Person", in.Defs)
	}
	schema, err := registry.CompileSchema(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"value":1,"children":[{"value":2,"owner":{"name":"a","best":{"children":[]}}}]}`
	if err := schema.Validate(json.RawMessage(ok)); err != nil {
		t.Errorf("valid tree refused: %v", err)
	}
	bad := `{"children":[{"owner":{"best":{"value":"x"}}}]}`
	if err := schema.Validate(json.RawMessage(bad)); err == nil {
		t.Error("a deep bad value was accepted")
	}
	if len(tool.OutputSchema) == 0 {
		t.Error("the recursive object response has no output schema")
	}
	mustTool(t, res, "getSelf") // a schema that is only a reference to itself still imports
}

// TestUnresolvableRefs checks that external and dangling references skip
// the operation with a reason.
func TestUnresolvableRefs(t *testing.T) {
	paths := `  /ext:
    get:
      parameters: [{name: q, in: query, schema: {$ref: 'other.yaml#/Thing'}}]
      responses: {'200': {description: ok}}
  /gone:
    get:
      parameters: [{$ref: '#/components/parameters/Gone'}]
      responses: {'200': {description: ok}}
  /fine:
    get: {responses: {'200': {description: ok}}}
`
	res := mustImport(t, doc30(paths, ""), nil)
	// Each skip now names the operation's JSON pointer and YAML line too.
	want := []string{
		`GET /ext (/paths/~1ext/get, line 6): argument "q": external $ref "other.yaml#/Thing" is not supported`,
		`GET /gone (/paths/~1gone/get, line 10): $ref "#/components/parameters/Gone" points nowhere`,
	}
	if diff := cmp.Diff(want, res.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
}

// TestOutputSchema covers which response is used and when it is an
// object.
func TestOutputSchema(t *testing.T) {
	obj := `{application/json: {schema: {type: object, properties: {id: {type: integer}}}}}`
	tests := []struct {
		name, responses string
		want            bool
	}{
		{"200 object", `{'200': {description: ok, content: ` + obj + `}}`, true},
		{"201 before 202", `{'202': {description: ok}, '201': {description: ok, content: ` + obj + `}}`, true},
		{"2XX range", `{'2XX': {description: ok, content: ` + obj + `}}`, true},
		{"default", `{default: {description: ok, content: ` + obj + `}}`, true},
		{"ref response", `{'200': {$ref: '#/components/responses/Thing'}}`, true},
		{"array", `{'200': {description: ok, content: {application/json: {schema: {type: array}}}}}`, false},
		{"text", `{'200': {description: ok, content: {text/plain: {schema: {type: object}}}}}`, false},
		{"nullable object", `{'200': {description: ok, content: {application/json: {schema: {type: object, nullable: true}}}}}`, false},
		{"no content", `{'204': {description: ok}}`, false},
	}
	components := "  responses:\n    Thing: {description: ok, content: " + obj + "}\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := "  /x:\n    get: {operationId: op, responses: " + tt.responses + "}\n"
			tool := mustTool(t, mustImport(t, doc30(paths, components), nil), "op")
			if got := len(tool.OutputSchema) > 0; got != tt.want {
				t.Errorf("has output schema = %v, want %v (%s)", got, tt.want, tool.OutputSchema)
			}
		})
	}
}
