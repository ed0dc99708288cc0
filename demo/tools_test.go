package demo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/rest"
)

// TestToolsThroughTheRESTBackend calls every demo tool the way the gateway
// does: through the REST backend, against the API on a real server.
func TestToolsThroughTheRESTBackend(t *testing.T) {
	dir := t.TempDir()
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, NewAPI(dir)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	skill := Skill(srv.URL + Prefix)
	backend := rest.New(nil)
	for _, c := range []struct {
		tool, args, want string
	}{
		{"convert_units", `{"value":5,"from":"km","to":"m"}`, `"result":5000`},
		{"convert_currency", `{"amount":100,"from":"EUR","to":"GBP"}`, `"result":82.9`},
		{"get_weather", `{"city":"new-york"}`, `"city":"New York"`},
		{"get_weather", `{"city":"tokyo","units":"imperial"}`, `"temperature_unit":"°F"`},
		{"save_invoice_csv", `{"filename":"jan","rows":[{"date":"2025-01-31","vendor":"ACME","amount":99.99}]}`, `"total":99.99`},
		{"list_invoices", `{}`, `"count":1`},
		{"delete_invoice", `{"filename":"nope"}`, `"deleted":false`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			tool := findTool(t, skill, c.tool)
			mustValidate(t, tool.InputSchema, json.RawMessage(c.args))
			res, err := backend.CallTool(context.Background(), &mcpgate.Call{
				Skill: skill, Tool: tool, ToolName: tool.Name, Arguments: json.RawMessage(c.args), Notifier: mcpgate.NopNotifier{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.StructuredContent) == 0 || !strings.Contains(string(res.StructuredContent), c.want) {
				t.Fatalf("result %+v, want structured content with %s", res, c.want)
			}
			mustValidate(t, tool.OutputSchema, res.StructuredContent)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "demo-invoices", "jan.csv")); err != nil {
		t.Error(err)
	}
}

// findTool returns a skill's tool by name.
func findTool(tb testing.TB, s *mcpgate.Skill, name string) *mcpgate.Tool {
	tb.Helper()
	for _, t := range s.Tools {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("no tool %s", name)
	return nil
}
