package openapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/rest"
)

// seen is what the Petstore test server saw of one request.
type seen struct {
	Method, Path, Query string
	APIKey, Auth        string
	Body                any
}

// petstore is a test server implementing three Petstore operations under
// /api/v3, recording each request.
type petstore struct {
	mu   sync.Mutex
	seen []seen
}

// ServeHTTP records the request and answers as the Petstore does.
func (p *petstore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, APIKey: r.Header.Get("api_key"), Auth: r.Header.Get("Authorization")}
	if data, _ := io.ReadAll(r.Body); len(data) > 0 {
		json.Unmarshal(data, &s.Body)
	}
	p.mu.Lock()
	p.seen = append(p.seen, s)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.Method + " " + r.URL.Path {
	case "POST /api/v3/pet":
		io.WriteString(w, `{"id":7,"name":"Rex","photoUrls":["a.png"],"status":"available"}`)
	case "GET /api/v3/pet/7":
		io.WriteString(w, `{"id":7,"name":"Rex","photoUrls":["a.png"],"status":"sold"}`)
	case "GET /api/v3/pet/findByStatus":
		io.WriteString(w, `[{"id":7,"name":"Rex","photoUrls":[]}]`)
	default:
		http.NotFound(w, r)
	}
}

// TestPetstoreCalls imports the Petstore, points the skill at a local
// server and calls three operations through the REST backend, checking
// what the server saw, secrets included.
func TestPetstoreCalls(t *testing.T) {
	store := &petstore{}
	srv := httptest.NewServer(store)
	t.Cleanup(srv.Close)
	data, err := os.ReadFile(filepath.Join("testdata", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := mustImport(t, string(data), &Options{Skill: "petstore", BaseURL: srv.URL + "/api/v3"})
	env := map[string]string{"PETSTORE_API_KEY": "k-123", "PETSTORE_PETSTORE_AUTH": "tok-456"}
	if diff := cmp.Diff([]string{"PETSTORE_API_KEY", "PETSTORE_PETSTORE_AUTH"}, res.Secrets); diff != "" {
		t.Fatalf("Secrets (-want +got):\n%s", diff)
	}
	backend := rest.New(&rest.Options{AllowPrivate: true, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	skill := &mcpgate.Skill{AgentID: "a", Name: "petstore", Kind: mcpgate.SkillREST, BaseURL: res.BaseURL, Headers: res.Headers, Tools: res.Tools}
	calls := []struct {
		tool, args string
		want       seen
		structured string
	}{
		{"addPet", `{"name":"Rex","photoUrls":["a.png"],"status":"available"}`,
			seen{Method: "POST", Path: "/api/v3/pet", Body: map[string]any{"name": "Rex", "photoUrls": []any{"a.png"}, "status": "available"}},
			`{"id":7,"name":"Rex","photoUrls":["a.png"],"status":"available"}`},
		{"getPetById", `{"petId":7}`, seen{Method: "GET", Path: "/api/v3/pet/7"},
			`{"id":7,"name":"Rex","photoUrls":["a.png"],"status":"sold"}`},
		{"findPetsByStatus", `{"status":"sold"}`, seen{Method: "GET", Path: "/api/v3/pet/findByStatus", Query: "status=sold"}, ""},
	}
	for i, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			result := mustCallTool(t, backend, skill, mustTool(t, res, c.tool), c.args)
			if result.IsError {
				t.Fatalf("IsError: %+v", result.Content)
			}
			if c.structured != "" {
				if diff := cmp.Diff(mustDecode(t, json.RawMessage(c.structured)), mustDecode(t, result.StructuredContent)); diff != "" {
					t.Errorf("structuredContent (-want +got):\n%s", diff)
				}
			}
			c.want.APIKey, c.want.Auth = "k-123", "Bearer tok-456"
			store.mu.Lock()
			got := store.seen[i]
			store.mu.Unlock()
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("server saw (-want +got):\n%s", diff)
			}
		})
	}
}

// mustCallTool validates the arguments against the tool's input schema,
// as the pipeline does, and calls the tool.
func mustCallTool(tb testing.TB, b *rest.Backend, skill *mcpgate.Skill, tool *mcpgate.Tool, args string) *mcpgate.Result {
	tb.Helper()
	schema, err := registry.CompileSchema(tool.InputSchema)
	if err != nil {
		tb.Fatal(err)
	}
	if err := schema.Validate(json.RawMessage(args)); err != nil {
		tb.Fatalf("arguments %s: %v", args, err)
	}
	res, err := b.CallTool(context.Background(), &mcpgate.Call{
		Skill: skill, Tool: tool, ToolName: tool.Name, Arguments: json.RawMessage(args), Notifier: mcpgate.NopNotifier{},
	})
	if err != nil {
		tb.Fatalf("CallTool: %v", err)
	}
	return res
}
