package demo

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

func TestSkillIsValid(t *testing.T) {
	s := Skill("http://127.0.0.1:8094/_demo/api/")
	if err := registry.Check([]*mcpgate.Skill{s}); err != nil {
		t.Fatalf("registry.Check: %v", err)
	}
	if s.BaseURL != "http://127.0.0.1:8094/_demo/api" {
		t.Errorf("BaseURL %q keeps the trailing slash", s.BaseURL)
	}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
		if tool.Title == "" || tool.Description == "" || len(tool.Annotations) == 0 || tool.Request == nil {
			t.Errorf("tool %s lacks a title, description, annotations or request", tool.Name)
		}
	}
	want := []string{"convert_units", "convert_currency", "get_weather", "save_invoice_csv", "list_invoices", "delete_invoice"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if s.Source != mcpgate.SourceDemo || !s.AllowPrivate || !s.AutoApprove || s.AgentID != AgentID {
		t.Errorf("skill settings %+v", s)
	}
	for _, tool := range s.Tools { // one tool that changes data shows the approval gate
		if gated := tool.Name == "delete_invoice"; s.NeedsApproval(tool) != gated {
			t.Errorf("tool %s needs approval: %v, want %v", tool.Name, !gated, gated)
		}
	}
	if p := s.Check(); len(p) != 0 {
		t.Errorf("the demo skill's checks: %v", p)
	}
}

// TestSkillSchemasAcceptTheAPI checks that each tool's input schema accepts
// a typical call and its output schema accepts what the API answers.
func TestSkillSchemasAcceptTheAPI(t *testing.T) {
	h := NewAPI(t.TempDir())
	tools := map[string]*mcpgate.Tool{}
	for _, tool := range Skill("http://127.0.0.1").Tools {
		tools[tool.Name] = tool
	}
	for _, c := range []struct{ tool, args, method, path, body string }{
		{"convert_units", `{"value":3,"from":"km","to":"mi"}`, "POST", "/convert/units", `{"value":3,"from":"km","to":"mi"}`},
		{"convert_currency", `{"amount":12,"from":"USD","to":"EUR"}`, "GET", "/convert/currency?amount=12&from=USD&to=EUR", ""},
		{"get_weather", `{"city":"cairo","units":"imperial"}`, "GET", "/weather/cairo?units=imperial", ""},
		{"save_invoice_csv", `{"filename":"q1","rows":[{"date":"2025-01-05","vendor":"v","amount":2}]}`,
			"POST", "/invoices/q1/csv", `{"rows":[{"date":"2025-01-05","vendor":"v","amount":2}]}`},
		{"list_invoices", `{}`, "GET", "/invoices", ""},
		{"delete_invoice", `{"filename":"q1"}`, "DELETE", "/invoices/q1", ""},
	} {
		t.Run(c.tool, func(t *testing.T) {
			tool := tools[c.tool]
			mustValidate(t, tool.InputSchema, []byte(c.args))
			status, _, body := do(t, h, c.method, c.path, c.body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			mustValidate(t, tool.OutputSchema, body)
		})
	}
}

// mustValidate checks doc against a schema.
func mustValidate(tb testing.TB, schema, doc json.RawMessage) {
	tb.Helper()
	s, err := registry.CompileSchema(schema)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		tb.Fatalf("%s: %v", doc, err)
	}
}
