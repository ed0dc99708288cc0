package registry

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// orderSchema is a realistic tool input schema with five properties.
const orderSchema = `{
	"type": "object",
	"required": ["customer", "quantity"],
	"additionalProperties": false,
	"properties": {
		"customer": {"type": "string", "minLength": 2},
		"quantity": {"type": "integer", "minimum": 1},
		"priority": {"enum": ["low", "normal", "high"]},
		"notes":    {"type": "string", "maxLength": 200},
		"rows": {
			"type": "array",
			"items": {
				"type": "object",
				"required": ["sku"],
				"properties": {"sku": {"type": "string"}, "quantity": {"type": "number"}}
			}
		}
	}
}`

func TestCompileSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		errHas string // "" means it compiles
	}{
		{"object", orderSchema, ""},
		{"local ref to $defs", `{"$defs":{"a":{"type":"string"}},"type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}`, ""},
		{"draft-07 by $schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, ""},
		{"not JSON", `{"type":`, "schema is not valid JSON"},
		{"trailing data", `{"type":"object"} {}`, "schema is not valid JSON"},
		{"bad type keyword", `{"type":"objekt"}`, "schema does not compile"},
		{"array root", `[]`, "schema does not compile"},
		{"file ref", `{"$ref":"file:///etc/passwd"}`, `external $ref "file:///etc/passwd" is not allowed; put definitions in $defs`},
		{"http ref", `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:9/s.json#/$defs/a"}}}`, `external $ref "http://127.0.0.1:9/s.json" is not allowed`},
		{"https ref", `{"$ref":"https://127.0.0.1:9/s.json"}`, `external $ref "https://127.0.0.1:9/s.json" is not allowed`},
		{"remote metaschema", `{"$schema":"http://127.0.0.1:9/meta","type":"object"}`, `external $ref "http://127.0.0.1:9/meta" is not allowed`},
		{"ref relative to $id", `{"$id":"http://127.0.0.1:9/root.json","type":"object","properties":{"x":{"$ref":"other.json"}}}`, `external $ref "http://127.0.0.1:9/other.json" is not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSchema(json.RawMessage(tt.schema))
			if tt.errHas == "" {
				if err != nil || s == nil {
					t.Fatalf("CompileSchema: %v", err)
				}
				return
			}
			mustErrorContain(t, err, mcpgate.EINVALID, tt.errHas)
			if msg := mcpgate.ErrorMessage(err); strings.Contains(msg, "\n") {
				t.Errorf("message spans lines: %q", msg)
			}
		})
	}
}

// TestCompileSchemaReadsNoFile points a $ref at a real, valid schema file:
// compiling must still fail, which proves the file was never read.
func TestCompileSchemaReadsNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(path, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := "file://" + filepath.ToSlash(path)
	_, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`))
	mustErrorContain(t, err, mcpgate.EINVALID, "external $ref")
}

// TestCompileSchemaFetchesNothing serves a valid schema and checks that a
// $ref to it fails without a single request reaching the server.
func TestCompileSchemaFetchesNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	for _, raw := range []string{
		`{"type":"object","properties":{"a":{"$ref":"` + srv.URL + `/a.json"}}}`,
		`{"$schema":"` + srv.URL + `/meta.json","type":"object"}`,
	} {
		_, err := CompileSchema(json.RawMessage(raw))
		mustErrorContain(t, err, mcpgate.EINVALID, "external $ref")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestSchemaValidate(t *testing.T) {
	s := mustCompile(t, orderSchema)
	tests := []struct {
		name string
		doc  string
		want []string // the lines of the message; nil means valid
	}{
		{"valid", `{"customer":"ACME","quantity":3,"priority":"high","rows":[{"sku":"a-1","quantity":1.5}]}`, nil},
		{"missing required", `{}`, []string{"(arguments): missing properties 'customer', 'quantity'"}},
		{"every bad field", `{"customer":"A","quantity":0,"priority":"urgent","notes":7,"rows":[{"sku":"a"},{"quantity":"2"}],"extra":true}`, []string{
			"(arguments): additional properties 'extra' not allowed",
			"/customer: minLength: got 1, want 2",
			"/notes: got number, want string",
			"/priority: value must be one of 'low', 'normal', 'high'",
			"/quantity: minimum: got 0, want 1",
			"/rows/1/quantity: got string, want number",
			"/rows/1: missing property 'sku'",
		}},
		{"wrong type", `{"customer":"ACME","quantity":"3"}`, []string{"/quantity: got string, want integer"}},
		{"not an object", `[1,2]`, []string{"(arguments): got array, want object"}},
		{"not JSON", `{"customer":`, []string{"not valid JSON: unexpected EOF"}},
		{"trailing data", `{"customer":"ACME","quantity":1} x`, []string{"not valid JSON: invalid character after top-level value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate(json.RawMessage(tt.doc))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if code := mcpgate.ErrorCode(err); code != mcpgate.EINVALID {
				t.Fatalf("code = %q, want %q (err %v)", code, mcpgate.EINVALID, err)
			}
			got := strings.Split(mcpgate.ErrorMessage(err), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("message lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchemaValidateValue(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer"}}}`)
	if err := s.ValidateValue(map[string]any{"n": json.Number("4")}); err != nil {
		t.Errorf("ValidateValue(valid): %v", err)
	}
	err := s.ValidateValue(map[string]any{"n": json.Number("4.5")})
	mustErrorContain(t, err, mcpgate.EINVALID, "/n: got number, want integer")
}

func TestSchemaAcceptsAnyObject(t *testing.T) {
	for _, c := range []struct {
		schema string
		any    bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","properties":{},"required":[],"additionalProperties":true}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"none","description":"Takes nothing.","additionalProperties":{}}`, true},
		{`{"type":"object","additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","minProperties":1}`, false},
		{`{"type":"object","not":{"required":["a"]}}`, false},
		{`{"type":["object","null"]}`, false},
		{`{}`, false},
	} {
		s := mustCompile(t, c.schema)
		if s.anyObject != c.any {
			t.Errorf("%s: anyObject = %v, want %v", c.schema, s.anyObject, c.any)
		}
		// Whatever the flag, the answer is the library's.
		for _, doc := range []string{`{}`, `{"a":1,"b":[null]}`, `[]`, `"x"`, `1`, `null`, `true`} {
			v, ok := decodeValue([]byte(doc))
			if !ok {
				t.Fatalf("decodeValue(%s) failed", doc)
			}
			got, want := s.ValidateValue(v), s.s.Validate(v)
			if (got == nil) != (want == nil) {
				t.Errorf("%s on %s: ValidateValue = %v, the library says %v", c.schema, doc, got, want)
			}
		}
	}
	err := mustCompile(t, `{"type":"object"}`).ValidateValue([]any{})
	mustErrorContain(t, err, mcpgate.EINVALID, "got array, want object")
}

func BenchmarkValidateAnyObject(b *testing.B) {
	s := mustCompile(b, `{"type":"object"}`)
	doc := json.RawMessage(`{}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, orderSchema)
	doc := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"normal","notes":"leave at the back door",` +
		`"rows":[{"sku":"A-100","quantity":4},{"sku":"B-200","quantity":8}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// mustCompile compiles a schema or stops the test.
func mustCompile(tb testing.TB, raw string) *Schema {
	tb.Helper()
	s, err := CompileSchema(json.RawMessage(raw))
	if err != nil {
		tb.Fatalf("CompileSchema: %v", err)
	}
	return s
}

// mustErrorContain checks an error's code and that its message holds want.
func mustErrorContain(tb testing.TB, err error, code, want string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want %s error containing %q", code, want)
	}
	if got := mcpgate.ErrorCode(err); got != code {
		tb.Errorf("code = %q, want %q (err %v)", got, code, err)
	}
	if msg := mcpgate.ErrorMessage(err); !strings.Contains(msg, want) {
		tb.Errorf("message = %q, want it to contain %q", msg, want)
	}
}
