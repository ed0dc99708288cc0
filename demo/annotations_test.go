package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/rest"
)

// hints are a tool's MCP annotations.
type hints struct {
	ReadOnly    *bool `json:"readOnlyHint"`
	Destructive *bool `json:"destructiveHint"`
	Idempotent  *bool `json:"idempotentHint"`
	OpenWorld   *bool `json:"openWorldHint"`
}

// mustHints decodes a tool's annotations and fails the test unless all
// four hints are stated: the specification's defaults (may write, may
// destroy, not idempotent, open world) are wrong for every demo tool.
func mustHints(tb testing.TB, tool *mcpgate.Tool) (readOnly, destructive, idempotent, openWorld bool) {
	tb.Helper()
	var h hints
	if err := json.Unmarshal(tool.Annotations, &h); err != nil {
		tb.Fatalf("%s annotations %s: %v", tool.Name, tool.Annotations, err)
	}
	if h.ReadOnly == nil || h.Destructive == nil || h.Idempotent == nil || h.OpenWorld == nil {
		tb.Fatalf("%s annotations %s: state readOnlyHint, destructiveHint, idempotentHint and openWorldHint", tool.Name, tool.Annotations)
	}
	return *h.ReadOnly, *h.Destructive, *h.Idempotent, *h.OpenWorld
}

// TestAnnotationsTellTheTruth calls each demo tool twice, as the gateway
// does, on storage that already holds an invoice file, and checks each
// hint against what the calls did: whether they changed the storage
// (readOnlyHint), changed or removed what was there before
// (destructiveHint), and whether the second call changed anything or
// answered differently (idempotentHint). No result may show the server's
// data directory.
func TestAnnotationsTellTheTruth(t *testing.T) {
	for _, c := range []struct{ tool, args string }{
		{"convert_units", `{"value":5,"from":"km","to":"m"}`},
		{"convert_currency", `{"amount":100,"from":"EUR","to":"GBP"}`},
		{"get_weather", `{"city":"tokyo","units":"imperial"}`},
		{"save_invoice_csv", `{"filename":"jan","rows":[{"date":"2025-01-31","vendor":"ACME","amount":99.99}]}`},
		{"list_invoices", `{}`},
		{"delete_invoice", `{"filename":"jan"}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			dir := t.TempDir()
			call := demoCaller(t, dir)
			call("save_invoice_csv", `{"filename":"jan","rows":[{"date":"2025-01-01","vendor":"Before","amount":1}]}`)
			before := snapshot(t, dir)
			first := call(c.tool, c.args)
			once := snapshot(t, dir)
			second := call(c.tool, c.args)
			twice := snapshot(t, dir)

			readOnly, destructive, idempotent, openWorld := mustHints(t, findTool(t, Skill("http://127.0.0.1"), c.tool))
			changed := !maps.Equal(before, once)
			if readOnly == changed {
				t.Errorf("readOnlyHint %v, but the call changed the storage: %v", readOnly, changed)
			}
			if destroyed := overwrote(before, once); destructive != destroyed {
				t.Errorf("destructiveHint %v, but the call changed or removed what was there: %v", destructive, destroyed)
			}
			if same := maps.Equal(once, twice) && bytes.Equal(first, second); idempotent != same {
				t.Errorf("idempotentHint %v, but a repeated call left the same storage and answer: %v", idempotent, same)
			}
			if openWorld {
				t.Errorf("openWorldHint true, but the demo API serves built-in data and its own files only")
			}
		})
	}
}

// demoCaller serves the demo API on dir and returns a function that calls
// a demo tool through the REST backend and returns its result as JSON. It
// fails the test when the call fails or its result shows dir.
func demoCaller(t *testing.T, dir string) func(tool, args string) []byte {
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, NewAPI(dir)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	skill := Skill(srv.URL + Prefix)
	backend := rest.New(nil)
	return func(name, args string) []byte {
		t.Helper()
		tool := findTool(t, skill, name)
		res, err := backend.CallTool(context.Background(), &mcpgate.Call{
			Skill: skill, Tool: tool, ToolName: name, Arguments: json.RawMessage(args), Notifier: mcpgate.NopNotifier{},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("%s: %s", name, data)
		}
		mustNotShow(t, data, dir)
		return data
	}
}

// mustNotShow fails the test if a result shows the data directory, in
// either of the forms JSON may write it.
func mustNotShow(tb testing.TB, result []byte, dir string) {
	tb.Helper()
	quoted, _ := json.Marshal(dir)
	if bytes.Contains(result, []byte(dir)) || bytes.Contains(result, bytes.Trim(quoted, `"`)) {
		tb.Errorf("result shows the server's data directory %s: %s", dir, result)
	}
}

// snapshot returns every file under dir by its relative path, with its
// content.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[strings.TrimPrefix(path, dir)] = string(data)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// overwrote reports whether a file of before is gone or different in
// after.
func overwrote(before, after map[string]string) bool {
	for name, data := range before {
		if got, ok := after[name]; !ok || got != data {
			return true
		}
	}
	return false
}
