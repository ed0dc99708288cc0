package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// notesSpec is a small OpenAPI 3.0 document with an API key in a header.
const notesSpec = `openapi: 3.0.3
info: {title: Notes, version: "1"}
servers: [{url: "BASE"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Api-Key}
security: [{key: []}]
paths:
  /notes:
    get:
      operationId: listNotes
      summary: List notes.
      responses: {"200": {description: ok}}
    post:
      operationId: createNote
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {text: {type: string}}, required: [text]}
      responses: {"201": {description: created}}
  /notes/{id}:
    delete:
      operationId: deleteNote
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"204": {description: gone}}
`

// importReply is the part of an import response the tests read.
type importReply struct {
	Skill struct {
		BaseURL string            `json:"base_url"`
		Headers map[string]string `json:"headers"`
		Source  string
		Tools   []struct{ Name string }
	}
	Secrets []string
	Skipped []string
}

func TestAPIImport(t *testing.T) {
	f := mustAPIFixture(t)
	path := "/api/v1/agents/shop/skills/notes/import"
	body, _ := json.Marshal(map[string]any{"document": notesSpec, "base_url": "https://api.example.com/v1", "exclude": []string{"deleteNote"}})
	var res importReply
	f.call(t, "POST", path, f.root, string(body)).want(t, http.StatusCreated).decode(t, &res)
	var names []string
	for _, tool := range res.Skill.Tools {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"createNote", "listNotes"}, names); diff != "" {
		t.Errorf("imported tools (-want +got):\n%s", diff)
	}
	if res.Skill.BaseURL != "https://api.example.com/v1" || len(res.Secrets) != 1 || res.Skill.Headers["X-Api-Key"] != "${env:"+res.Secrets[0]+"}" || res.Skill.Source != "api" {
		t.Errorf("import = %+v", res)
	}
	if diff := cmp.Diff([]string{"createNote", "echo", "listNotes"}, f.toolNames(t, "shop")); diff != "" {
		t.Errorf("served tools (-want +got):\n%s", diff)
	}

	// From a URL, replacing the skill.
	spec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		io.WriteString(w, notesSpec)
	}))
	defer spec.Close()
	body, _ = json.Marshal(map[string]any{"source": spec.URL + "/openapi.yaml", "base_url": "http://127.0.0.1:9", "allow_private": true})
	f.call(t, "POST", path, f.root, string(body)).want(t, http.StatusOK).decode(t, &res)
	if len(res.Skill.Tools) != 3 {
		t.Errorf("re-import made %d tools, want 3", len(res.Skill.Tools))
	}
}

func TestAPIImportRefusals(t *testing.T) {
	f := mustAPIFixture(t)
	path := "/api/v1/agents/shop/skills/notes/import"
	tests := []struct {
		name, body       string
		status           int
		code, field, msg string
	}{
		{"a local file", `{"source":"/etc/passwd"}`, 400, "invalid", "source", "http or https URL"},
		{"a file URL", `{"source":"file:///etc/passwd"}`, 400, "invalid", "source", "http or https URL"},
		{"neither", `{}`, 400, "invalid", "source", "exactly one"},
		{"both", `{"source":"http://127.0.0.1:9/x","document":"openapi: 3.0.0"}`, 400, "invalid", "source", "exactly one"},
		{"loopback without allow_private", `{"source":"http://127.0.0.1:9/openapi.json"}`, 400, "invalid", "source", ""},
		{"not OpenAPI", `{"document":"hello: world"}`, 400, "invalid", "document", ""},
		{"clash", `{"document":` + jsonString(notesSpec) + `,"base_url":"https://api.example.com","include":["listNotes"]}`, 0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call(t, "POST", path, f.root, tt.body)
			if tt.status == 0 {
				r.want(t, http.StatusCreated)
				return
			}
			r.wantError(t, tt.status, tt.code, tt.field, tt.msg)
		})
	}
	// A second skill importing the same operation clashes with the first.
	body := `{"document":` + jsonString(notesSpec) + `,"base_url":"https://api.example.com","include":["listNotes"]}`
	f.call(t, "POST", "/api/v1/agents/shop/skills/again/import", f.root, body).
		wantError(t, http.StatusConflict, "conflict", "", `"listNotes" is served by both skill "notes" and skill "again"`)
	prefixed := strings.Replace(body, `"include"`, `"prefix":"again_","include"`, 1)
	f.call(t, "POST", "/api/v1/agents/shop/skills/again/import", f.root, prefixed).want(t, http.StatusCreated)
	if names := f.toolNames(t, "shop"); !slices.Contains(names, "again_listNotes") {
		t.Errorf("served tools = %v, want again_listNotes", names)
	}
	f.call(t, "POST", path, f.shopKey, body).want(t, http.StatusForbidden)
	f.call(t, "POST", "/api/v1/agents/bobs/skills/notes/import", f.alice, body).want(t, http.StatusNotFound)
}

// TestAPIImportReportsSkips checks that the import response names each
// skipped operation with its JSON pointer and YAML line, and that a
// document with nothing importable is refused with the reasons, not with a
// word about patterns nobody gave.
func TestAPIImportReportsSkips(t *testing.T) {
	f := mustAPIFixture(t)
	path := "/api/v1/agents/shop/skills/notes/import"
	doc := strings.Replace(notesSpec, "  /notes/{id}:\n", "  /broken:\n    get: [1, 2]\n  /notes/{id}:\n", 1)
	body, _ := json.Marshal(map[string]any{"document": doc, "base_url": "https://api.example.com/v1"})
	var res importReply
	f.call(t, "POST", path, f.root, string(body)).want(t, http.StatusCreated).decode(t, &res)
	want := []string{"GET /broken (/paths/~1broken/get, line 22): the operation is an array, not an object"}
	if diff := cmp.Diff(want, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	bad, _ := json.Marshal(map[string]any{"document": "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get: [1, 2]\n"})
	r := f.call(t, "POST", path, f.root, string(bad))
	r.wantError(t, http.StatusBadRequest, "invalid", "", "every operation was skipped: GET /a (/paths/~1a/get, line 5): the operation is an array, not an object; also, the document's servers[0].url")
}

// jsonString encodes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAPIOperatorPowers checks that only administrators may write skills
// that read the gateway's environment or reach private networks, whether by
// hand or by import, and may not edit such a skill either.
func TestAPIOperatorPowers(t *testing.T) {
	f := mustAPIFixture(t)
	skills := "/api/v1/agents/shop/skills"
	withSecret := `{"name":"leak","base_url":"https://api.example.com","headers":{"X-Leak":"${env:MCPGATE_DB}"},"tools":[` + toolJSON("t") + `]}`
	private := `{"name":"inside","base_url":"http://127.0.0.1:9","allow_private":true,"tools":[` + toolJSON("t") + `]}`
	inQuery := `{"name":"q","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/","query":{"k":"${env:SECRET}"}}}]}`
	f.call(t, "POST", skills, f.alice, withSecret).wantError(t, http.StatusForbidden, "forbidden", "headers.X-Leak", "only an administrator")
	f.call(t, "POST", skills, f.alice, private).wantError(t, http.StatusForbidden, "forbidden", "allow_private", "only an administrator")
	f.call(t, "POST", skills, f.alice, inQuery).wantError(t, http.StatusForbidden, "forbidden", "tools[0].request.query.k", "only an administrator")
	stdio := `{"name":"run","kind":"mcp","command":"/bin/sh","args":["-c","id"]}`
	f.call(t, "POST", skills, f.alice, stdio).wantError(t, http.StatusForbidden, "forbidden", "command", "only an administrator")
	push := `{"name":"p","kind":"agent","delivery":"push","push_url":"https://a.example.com/in","push_secret":"${env:MCPGATE_DB}"}`
	f.call(t, "POST", skills, f.alice, push).wantError(t, http.StatusForbidden, "forbidden", "push_secret", "only an administrator")
	imp, _ := json.Marshal(map[string]any{"document": notesSpec, "base_url": "https://api.example.com/v1"})
	f.call(t, "POST", skills+"/notes/import", f.alice, string(imp)).wantError(t, http.StatusForbidden, "forbidden", "headers.X-Api-Key", "only an administrator")

	f.call(t, "POST", skills, f.root, withSecret).want(t, http.StatusCreated)
	f.call(t, "POST", skills+"/leak/tools", f.alice, toolJSON("more")).wantError(t, http.StatusForbidden, "forbidden", "headers.X-Leak", "only an administrator")
	f.call(t, "DELETE", skills+"/leak", f.alice, "").want(t, http.StatusNoContent)
}
