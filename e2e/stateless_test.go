package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// modernPost sends one MCP 2026-07-28 request with raw HTTP: no session,
// the per-request _meta, and the headers a client must send (hdr overrides
// them; "" deletes one). It returns the HTTP status, the headers and the
// JSON-RPC reply (the last event of an SSE reply).
func modernPost(t *testing.T, url, key, method, name, params string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta += "," + params
	}
	body := `{"jsonrpc":"2.0","id":"r1","method":"` + method + `","params":{` + meta + `}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %q", method, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, v
}

// TestStatelessRevision serves MCP 2026-07-28 through the real binary on
// the demo agent's endpoint, which keeps serving 2025-11-25 sessions:
// server/discover, tools/list and a call of a REST tool without any
// initialize or session, each HTTP rule of the revision, and the audit
// record of the call (no session id).
func TestStatelessRevision(t *testing.T) {
	g := startGateway(t, nil, "--demo", "--data-dir", t.TempDir())
	key := mustMatch(t, keyLine, waitFor(t, g.stdout.String, "Claude Desktop"))
	url := g.URL + "/demo/mcp"

	status, hdr, v := modernPost(t, url, key, "server/discover", "", "", nil)
	res, _ := v["result"].(map[string]any)
	if status != 200 || res["resultType"] != "complete" || res["cacheScope"] != "private" || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("server/discover: %d %v (session %q)", status, v, hdr.Get("Mcp-Session-Id"))
	}
	if vs, _ := res["supportedVersions"].([]any); len(vs) == 0 || vs[0] != "2026-07-28" {
		t.Errorf("supportedVersions %v", res["supportedVersions"])
	}

	status, _, v = modernPost(t, url, key, "tools/list", "", "", nil)
	res, _ = v["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	if status != 200 || len(tools) == 0 || res["ttlMs"] != float64(0) {
		t.Fatalf("tools/list: %d %v", status, v)
	}

	status, hdr, v = modernPost(t, url, key, "tools/call", "list_invoices", `"name":"list_invoices","arguments":{}`, nil)
	res, _ = v["result"].(map[string]any)
	if status != 200 || res["resultType"] != "complete" || res["isError"] == true || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("tools/call list_invoices: %d %v", status, v)
	}

	for _, tc := range []struct {
		name, method, mcpName, params string
		hdr                           map[string]string
		status, code                  int
	}{
		{"unsupported version", "tools/list", "", "", map[string]string{"MCP-Protocol-Version": "2099-01-01"}, 400, -32022},
		{"Mcp-Method missing", "tools/list", "", "", map[string]string{"Mcp-Method": ""}, 400, -32020},
		{"Mcp-Method differs", "tools/list", "", "", map[string]string{"Mcp-Method": "prompts/list"}, 400, -32020},
		{"Mcp-Name missing", "tools/call", "", `"name":"list_invoices"`, nil, 400, -32020},
		{"Mcp-Name differs", "tools/call", "delete_invoice", `"name":"list_invoices"`, nil, 400, -32020},
		{"unknown method", "no/such", "", "", nil, 404, -32601},
	} {
		status, _, v := modernPost(t, url, key, tc.method, tc.mcpName, tc.params, tc.hdr)
		e, _ := v["error"].(map[string]any)
		if code, _ := e["code"].(float64); status != tc.status || int(code) != tc.code {
			t.Errorf("%s: got %d %v, want %d %d", tc.name, status, v, tc.status, tc.code)
		}
	}

	// The _meta version differing from the header's.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, val := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"} {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "-32020") {
		t.Errorf("_meta version mismatch: %d %s", resp.StatusCode, b)
	}

	// subscriptions/listen opens a stream that starts with its acknowledgment.
	listen, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, val := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		listen.Header.Set(k, val)
	}
	lresp, err := http.DefaultClient.Do(listen)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(lresp.Body).ReadString('\n')
	lresp.Body.Close()
	if !strings.HasPrefix(line, `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"`) || !strings.Contains(line, `"toolsListChanged":true`) {
		t.Errorf("subscriptions/listen: %d %q", lresp.StatusCode, line)
	}

	// Old revisions keep their sessions on the same endpoint.
	s := openSession(t, url, bearer(key))
	if names := s.toolNames(); len(names) != len(tools) {
		t.Errorf("2025-11-25 session lists %d tools, 2026-07-28 %d", len(names), len(tools))
	}

	// The call is audited like any other, outside any session.
	var calls struct {
		Calls []struct {
			Tool      string `json:"tool"`
			Outcome   string `json:"outcome"`
			SessionID string `json:"session_id"`
		} `json:"calls"`
	}
	api := &apiClient{t: t, base: g.URL + "/api/v1", key: key}
	for deadline := time.Now().Add(20 * time.Second); len(calls.Calls) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // the audit log writes in batches
		api.mustDo("GET", "/calls", nil, 200, &calls)
	}
	if len(calls.Calls) != 1 || calls.Calls[0].Tool != "list_invoices" || calls.Calls[0].Outcome != "ok" || calls.Calls[0].SessionID != "" {
		t.Errorf("audit log: %+v", calls.Calls)
	}
}
