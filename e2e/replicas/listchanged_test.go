package replicas

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// restSkill is a REST skill of one tool, name_echo, on the test's backend.
func restSkill(e *env, name string) map[string]any {
	return map[string]any{"name": name, "base_url": e.rest.URL, "allow_private": true,
		"tools": []map[string]any{{
			"name": name + "_echo", "description": "Echo the arguments.", "input_schema": map[string]any{"type": "object"},
			"request": map[string]any{"method": "POST", "path": "/echo", "body": "all"},
		}}}
}

// apiDo sends a management API request to replica i as the administrator
// (a skill may reach the loopback backend only by an administrator's
// leave) and checks its status.
func apiDo(t *testing.T, e *env, i int, method, path string, body any, want int) {
	t.Helper()
	req, _ := http.NewRequest(method, e.Replica(i).URL+"/api/v1"+path, strings.NewReader(mustJSON(body)))
	req.Header.Set("Authorization", "Bearer "+e.root)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s on replica %d: HTTP %d %s", method, path, i, resp.StatusCode, b)
	}
}

// testListChangedElsewhere holds a session's GET stream on replica 0 and
// adds a skill to its agent through the management API on replica 1: the
// GET stream gets notifications/tools/list_changed (replica 0 reloads the
// registry on replica 1's signal and finds the agent's tools changed), and
// tools/list on every replica shows the new tool soon after. Each replica
// reloads on its own, so "soon": well within the cluster's --reload-every
// of 30 s, which only the bus's signal can meet.
func testListChangedElsewhere(t *testing.T, e *env) {
	apiDo(t, e, 1, "POST", "/agents", map[string]any{"id": "shop", "name": "Shop", "mcp_enabled": true}, http.StatusCreated)
	apiDo(t, e, 1, "POST", "/agents/shop/skills", restSkill(e, "first"), http.StatusCreated)
	waitListed(t, e, "shop", e.root)
	s := openRPC(t, e.URL+"/shop/mcp", e.root, `{}`)
	get := s.on(e, 0, "shop").send("", "")
	defer get.Body.Close()
	ev := newEvents(get.Body)
	if _, ok := ev.nextAny(); !ok {
		t.Fatalf("GET on replica 0: HTTP %d, no priming event", get.StatusCode)
	}
	apiDo(t, e, 1, "POST", "/agents/shop/skills", restSkill(e, "second"), http.StatusCreated)
	m := nextMessage(t, ev, func(m *rpcReply) bool { return m.Method != "" })
	if m.Method != "notifications/tools/list_changed" {
		t.Fatalf("the GET stream on replica 0 got %s, want notifications/tools/list_changed", m.Body)
	}
	for i := range e.Replicas {
		waitUntil(t, 5*time.Second, fmt.Sprintf("second_echo in tools/list on replica %d", i), func() bool {
			return slices.Contains(s.on(e, i, "shop").toolNames(), "second_echo")
		})
	}
}

// waitListed waits until agent's tools are listed to key on every replica
// (a replica learns of a new agent on the signal of the replica that
// stored it: the 10 s allowed are a third of the cluster's poll).
func waitListed(t *testing.T, e *env, agent, key string) {
	t.Helper()
	for _, r := range e.Replicas {
		url := r.URL + "/" + agent + "/mcp"
		waitUntil(t, 10*time.Second, "tools of "+agent+" on replica "+r.Addr, func() bool {
			return initializes(url, key) && len(openRPC(t, url, key, "{}").toolNames()) > 0
		})
	}
}

// initializes reports whether an initialize at url succeeds.
func initializes(url, key string) bool {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replicas","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := rpcClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}
