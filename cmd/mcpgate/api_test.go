package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// api sends a management API request with a key and a JSON body ("" for
// none) and fails unless the status is the wanted one.
func (g *testGateway) api(tb testing.TB, method, path, key, body string, status int) *reply {
	tb.Helper()
	h := bearer(key)
	if body == "" {
		h = with(h, headers("Content-Type", ""))
	}
	r := send(tb, method, g.URL()+path, h, body)
	if r.status != status {
		tb.Fatalf("%s %s: HTTP %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// waitListChanged waits for notifications/tools/list_changed on a GET
// stream.
func waitListChanged(tb testing.TB, events <-chan sseEvent) {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				tb.Fatal("the GET stream ended before notifications/tools/list_changed")
			}
			if strings.Contains(ev.Data, `"method":"notifications/tools/list_changed"`) {
				return
			}
		case <-timeout:
			tb.Fatal("no notifications/tools/list_changed within 10s")
		}
	}
}

// TestManagementAPI creates an agent, a skill and tools through the API
// while an MCP session is open, sees them in tools/list after
// notifications/tools/list_changed, calls one, and deletes them.
func TestManagementAPI(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	g.api(t, "POST", "/api/v1/agents", oag, `{"id":"crm","name":"CRM","mcp_enabled":true}`, http.StatusCreated)

	s := g.mustInitialize(t, "crm", bearer(oag), "2025-11-25")
	events := openGetStream(t, s)
	if names := toolNames(t, s); len(names) != 0 {
		t.Fatalf("a new agent serves %v, want no tools", names)
	}

	skill := fmt.Sprintf(`{"name":"contacts","base_url":%q,"allow_private":true,"tools":[
		{"name":"find","description":"Find a contact.","input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
		 "request":{"method":"POST","path":"/echo","body":"all"}}]}`, g.backend.URL)
	g.api(t, "POST", "/api/v1/agents/crm/skills", oag, skill, http.StatusCreated)
	waitListChanged(t, events)
	if diff := cmp.Diff([]string{"find"}, toolNames(t, s)); diff != "" {
		t.Errorf("tools/list after the skill (-want +got):\n%s", diff)
	}
	res, text := s.call(t, "find", `{"text":"ada"}`).mustToolResult(t)
	if res.IsError || !strings.Contains(text, `"text":"ada"`) {
		t.Errorf("find = %+v %q, want the echoed arguments", res, text)
	}

	tool := `{"name":"add","input_schema":{"type":"object","properties":{"text":{"type":"string"}}},"request":{"method":"POST","path":"/echo"}}`
	g.api(t, "POST", "/api/v1/agents/crm/skills/contacts/tools", oag, tool, http.StatusCreated)
	waitListChanged(t, events)
	if diff := cmp.Diff([]string{"add", "find"}, toolNames(t, s)); diff != "" {
		t.Errorf("tools/list after the tool (-want +got):\n%s", diff)
	}
	res, text = s.call(t, "add", `{"text":"grace"}`).mustToolResult(t)
	if res.IsError || !strings.Contains(text, "grace") {
		t.Errorf("add = %+v %q", res, text)
	}

	g.api(t, "DELETE", "/api/v1/agents/crm/skills/contacts/tools/add", oag, "", http.StatusNoContent)
	waitListChanged(t, events)
	if names := toolNames(t, s); slices.Contains(names, "add") {
		t.Errorf("tools/list after deleting add = %v", names)
	}
	g.api(t, "DELETE", "/api/v1/agents/crm/skills/contacts", oag, "", http.StatusNoContent)
	waitListChanged(t, events)
	if names := toolNames(t, s); len(names) != 0 {
		t.Errorf("tools/list after deleting the skill = %v, want none", names)
	}
	g.api(t, "DELETE", "/api/v1/agents/crm", oag, "", http.StatusNoContent)
	r := send(t, http.MethodPost, g.mcpURL("crm"), bearer(oag), initializeBody)
	if r.status != http.StatusNotFound {
		t.Errorf("initialize on the deleted agent: HTTP %d, want 404", r.status)
	}
}

// TestManagementAPIKeys makes and revokes a key through the API; the
// revoked key stops working at once.
func TestManagementAPIKeys(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	var created struct{ ID, Key string }
	r := g.api(t, "POST", "/api/v1/keys", oag, `{"kind":"agent","agent_id":"shop","name":"ci"}`, http.StatusCreated)
	if err := json.Unmarshal([]byte(r.body), &created); err != nil || !strings.HasPrefix(created.Key, "bak_") {
		t.Fatalf("created key: %s", r.body)
	}
	g.mustInitialize(t, "shop", bearer(created.Key), "2025-11-25")
	g.api(t, "DELETE", "/api/v1/keys/"+created.ID, oag, "", http.StatusNoContent)
	r = send(t, http.MethodPost, g.mcpURL("shop"), bearer(created.Key), initializeBody)
	if r.status != http.StatusUnauthorized {
		t.Errorf("initialize with the revoked key: HTTP %d, want 401", r.status)
	}
}
