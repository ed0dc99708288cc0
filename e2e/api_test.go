package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// apiClient calls the management API with a user key.
type apiClient struct {
	t    *testing.T
	base string // the gateway's URL + /api/v1
	key  string
}

// mustDo sends a JSON request, fails unless the status is want, and
// decodes the reply into out when out is not nil.
func (c *apiClient) mustDo(method, path string, body any, want int, out any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, reply)
	}
	if out != nil {
		if err := json.Unmarshal(reply, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, reply)
		}
	}
}

// startWithUser starts a gateway on a fresh data dir, with extra env and
// args, and returns it, a management API client acting for a user made
// with the CLI, and the env that points the CLI at the same data dir.
func startWithUser(t *testing.T, env []string, args ...string) (*gateway, *apiClient, []string) {
	t.Helper()
	env = append(slices.Clip(env), "MCPGATE_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
	runCLI(t, env, "init")                               // admin commands refuse a data dir with no database
	runCLI(t, env, "user", "create", "alice", "--admin") // its skills reach a loopback backend, an operator power
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice", "--name", "e2e"))
	g := startGateway(t, env, args...)
	return g, &apiClient{t: t, base: g.URL + "/api/v1", key: key}, env
}

// catalogSkill is a rest skill of two tools on an items backend.
func catalogSkill(baseURL string) map[string]any {
	return map[string]any{
		"name": "catalog", "base_url": baseURL, "allow_private": true,
		"tools": []map[string]any{{
			"name": "get_item", "description": "Fetch one item of the catalog.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []string{"id"}},
			"request":      map[string]any{"method": "GET", "path": "/items/{id}"},
		}, {
			"name": "list_items", "description": "List the catalog's items.",
			"input_schema": map[string]any{"type": "object"},
			"request":      map[string]any{"method": "GET", "path": "/items"},
		}},
	}
}

// itemsBackend answers GET /items/{id} with the item named in the path.
func itemsBackend() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": r.PathValue("id"), "name": "Widget " + r.PathValue("id"), "price": 9.5})
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[]}`))
	})
	return mux
}

// TestAPIChangesReachOpenSession holds a TS SDK client session on an
// agent made through the management API while the test adds a skill of two
// tools and deletes one of them through the API: the session gets
// notifications/tools/list_changed each time, sees the new tools, calls
// one, and sees the deleted one gone. Deleting the skill and the agent
// through the API then takes the agent's MCP endpoint away.
func TestAPIChangesReachOpenSession(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	backend := httptest.NewServer(itemsBackend())
	defer backend.Close()
	g, api, _ := startWithUser(t, nil)
	var agent struct {
		ID    string `json:"id"`
		Owner string `json:"owner"`
	}
	api.mustDo("POST", "/agents", map[string]any{"id": "shop", "name": "Shop", "mcp_enabled": true}, http.StatusCreated, &agent)
	if agent.ID != "shop" || agent.Owner != "alice" {
		t.Fatalf("created agent = %+v", agent)
	}
	url := g.URL + "/shop/mcp"

	s := startSession(t, sessionPlan{URL: url, Headers: bearer(api.key), TimeoutMs: 15000,
		Call: clientCall{Name: "get_item", Arguments: map[string]any{"id": "42"}}})
	s.expect("ready")
	api.mustDo("POST", "/agents/shop/skills", catalogSkill(backend.URL), http.StatusCreated, nil)
	s.expect("called")
	api.mustDo("DELETE", "/agents/shop/skills/catalog/tools/list_items", nil, http.StatusNoContent, nil)
	checkSessionReport(t, s.report())

	api.mustDo("DELETE", "/agents/shop/skills/catalog", nil, http.StatusNoContent, nil)
	api.mustDo("DELETE", "/agents/shop", nil, http.StatusNoContent, nil)
	api.mustDo("GET", "/agents/shop", nil, http.StatusNotFound, nil)
	if status := openRaw(url, bearer(api.key)); status != http.StatusNotFound {
		t.Errorf("MCP endpoint of the deleted agent: HTTP %d, want 404", status)
	}
}

// checkSessionReport checks what the open session saw at each step.
func checkSessionReport(t *testing.T, rep *sessionReport) {
	t.Helper()
	steps := [][]string{rep.Before, sorted(rep.Added), rep.Deleted}
	want := [][]string{{}, {"get_item", "list_items"}, {"get_item"}}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("tools before, after the add, after the delete (-want +got):\n%s", diff)
	}
	if rep.Notifications < 2 {
		t.Errorf("notifications/tools/list_changed received %d times, want 2", rep.Notifications)
	}
	res := rep.Call.Result
	if res == nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("get_item: error %+v result %+v", rep.Call.Error, res)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].Text), &got); err != nil {
		t.Fatalf("get_item text %q: %v", res.Content[0].Text, err)
	}
	if diff := cmp.Diff(map[string]any{"id": "42", "name": "Widget 42", "price": 9.5}, got); diff != "" {
		t.Errorf("get_item result is not the backend's answer (-want +got):\n%s", diff)
	}
}

// sorted returns a sorted copy of names.
func sorted(names []string) []string {
	return slices.Sorted(slices.Values(names))
}
