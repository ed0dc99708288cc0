package mcp

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestInitializeNegotiatesVersion(t *testing.T) {
	h := mustHarness(t, nil)
	tests := []struct{ asked, want string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2024-11-05"},
		{"2099-01-01", "2025-11-25"},
		{"", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.asked, func(t *testing.T) {
			resp := h.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tt.asked + `","capabilities":{"roots":{}},"clientInfo":{"name":"cli","version":"9"}}}`})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			sid := resp.Header.Get("Mcp-Session-Id")
			if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(sid) {
				t.Errorf("session id %q is not 128 bits of hex", sid)
			}
			got := mustJSON(t, mustRead(t, resp))
			want := map[string]any{"jsonrpc": "2.0", "id": 1.0, "result": map[string]any{
				"protocolVersion": tt.want,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
				"serverInfo":      map[string]any{"name": "mcpgate", "version": "9.9", "title": "Invoices"},
				"instructions":    "Invoices: Reads invoices.",
			}}
			diff(t, "initialize result", want, got)
			rec := h.store.get(sid)
			diff(t, "stored session", []string{"a1", "user:alice", tt.want, "cli", "9", `{"roots":{}}`},
				[]string{rec.AgentID, rec.Identity, rec.ProtocolVersion, rec.ClientName, rec.ClientVersion, string(rec.ClientCapabilities)})
		})
	}
}

// TestInitializeNeedsProtocolVersion checks that an initialize without
// params, or whose params lack a protocolVersion string, is -32602 naming
// protocolVersion and opens no session.
func TestInitializeNeedsProtocolVersion(t *testing.T) {
	h := mustHarness(t, nil)
	tests := map[string]struct{ params, msg string }{
		"no params":       {``, "protocolVersion"},
		"null params":     {`,"params":null`, "protocolVersion"},
		"empty params":    {`,"params":{}`, "protocolVersion"},
		"null version":    {`,"params":{"protocolVersion":null,"capabilities":{}}`, "protocolVersion"},
		"number version":  {`,"params":{"protocolVersion":20251125}`, "protocolVersion must be a string"},
		"array params":    {`,"params":["2025-11-25"]`, "params must be an object"},
		"only clientInfo": {`,"params":{"clientInfo":{"name":"c","version":"1"}}`, "protocolVersion"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp := h.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"initialize"` + tt.params + `}`})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("a session %s was opened", sid)
			}
			v := mustJSON(t, mustRead(t, resp))
			e, _ := v["error"].(map[string]any)
			if errCode(v) != -32602 || v["id"] != 1.0 || !strings.Contains(fmt.Sprint(e["message"]), tt.msg) {
				t.Errorf("reply %v, want -32602 with id 1 and a message containing %q", v, tt.msg)
			}
		})
	}
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	if n := len(h.store.sessions); n != 0 {
		t.Errorf("%d sessions stored, want none", n)
	}
}

func TestInitializeInSessionOpensNewSession(t *testing.T) {
	h := mustHarness(t, nil)
	old := h.mustInit(t, "2025-11-25", nil)
	sid := h.mustInit(t, "2025-11-25", map[string]string{"Mcp-Session-Id": old})
	if sid == old {
		t.Fatal("initialize within a session reused its id")
	}
	for _, id := range []string{old, sid} {
		if v := h.mustRPC(t, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); v["result"] == nil {
			t.Errorf("ping on %s: %v", id, v)
		}
	}
}

// TestHTTPErrors covers every refusal answered with an HTTP error status.
func TestHTTPErrors(t *testing.T) {
	h := mustHarness(t, &Options{MaxBodyBytes: 200})
	sid := h.mustInit(t, "2025-11-25", nil)
	other := h.mustInit(t, "2025-11-25", map[string]string{"X-Test-Identity": "bob"})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 300) + `"}}`
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name   string
		req    req
		status int
		code   int
		reason string
	}{
		{"content type", req{session: sid, body: ping, header: map[string]string{"Content-Type": "text/plain"}}, 415, -32000, "unsupported_media_type"},
		{"accept", req{session: sid, body: ping, header: map[string]string{"Accept": "text/html"}}, 406, -32000, "not_acceptable"},
		{"accept q=0", req{session: sid, body: ping, header: map[string]string{"Accept": "application/json;q=0"}}, 406, -32000, "not_acceptable"},
		{"too large", req{session: sid, body: big}, 413, -32000, "too_large"},
		{"missing session", req{body: ping}, 400, -32000, "invalid"},
		{"unknown session", req{session: strings.Repeat("ab", 16), body: ping}, 404, -32000, "not_found"},
		{"malformed session", req{session: "nope", body: ping}, 404, -32000, "not_found"},
		{"other agent", req{url: h.hs.URL + "/a2/mcp", session: sid, body: ping}, 404, -32000, "not_found"},
		{"other identity", req{session: other, body: ping}, 403, -32000, "forbidden"},
		{"bad version header", req{session: sid, body: ping, header: map[string]string{"Mcp-Protocol-Version": "2020-01-01"}}, 400, -32000, "invalid"},
		{"put", req{method: http.MethodPut, session: sid}, 405, -32000, "method_not_allowed"},
		{"get without sse", req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "application/json"}}, 406, -32000, "not_acceptable"},
		{"get missing session", req{method: http.MethodGet}, 400, -32000, "invalid"},
		{"delete unknown", req{method: http.MethodDelete, session: strings.Repeat("cd", 16)}, 404, -32000, "not_found"},
		{"malformed json", req{session: sid, body: `{"jsonrpc":`}, 400, -32700, ""},
		{"trailing garbage", req{session: sid, body: ping + "x"}, 400, -32700, ""},
		{"not an object", req{session: sid, body: `42`}, 400, -32600, ""},
		{"no jsonrpc", req{session: sid, body: `{"id":1,"method":"ping"}`}, 400, -32600, ""},
		{"wrong jsonrpc", req{session: sid, body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`}, 400, -32600, ""},
		{"null id", req{session: sid, body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`}, 400, -32600, ""},
		{"object id", req{session: sid, body: `{"jsonrpc":"2.0","id":{},"method":"ping"}`}, 400, -32600, ""},
		{"float id", req{session: sid, body: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`}, 400, -32600, ""},
		{"no method", req{session: sid, body: `{"jsonrpc":"2.0","id":1}`}, 400, -32600, ""},
		{"number method", req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":7}`}, 400, -32600, ""},
		{"miscased members", req{session: sid, body: `{"JSONRPC":"2.0","ID":6,"METHOD":"ping"}`}, 400, -32600, ""},
		{"miscased method", req{session: sid, body: `{"jsonrpc":"2.0","id":6,"method":"tools/list","Method":"ping"}`}, 400, -32600, ""},
		{"duplicate method", req{session: sid, body: `{"jsonrpc":"2.0","id":6,"method":"tools/list","method":"ping"}`}, 400, -32600, ""},
		{"string params", req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`}, 400, -32600, ""},
		{"empty batch", req{session: sid, body: `[]`}, 400, -32600, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.req)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, mustRead(t, resp))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			v := mustJSON(t, mustRead(t, resp))
			if v["id"] != nil || errCode(v) != tt.code {
				t.Errorf("body %v: want id null and code %d", v, tt.code)
			}
			if tt.reason != "" {
				data, _ := v["error"].(map[string]any)["data"].(map[string]any)
				diff(t, "error data", map[string]any{"reason": tt.reason, "status": float64(tt.status)}, data)
			}
			if tt.status == 405 && resp.Header.Get("Allow") != "GET, POST, DELETE" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
}

func TestVersionHeaderAcceptsAnySupported(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(v, func(t *testing.T) {
			resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, header: map[string]string{"Mcp-Protocol-Version": v}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
		})
	}
}

func TestAcceptedWithoutBody(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := map[string]string{
		"initialized":      `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"unknown notice":   `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`,
		"cancel unknown":   `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		"client result":    `{"jsonrpc":"2.0","id":"srv-1","result":{}}`,
		"client error":     `{"jsonrpc":"2.0","id":"srv-2","error":{"code":-1,"message":"no"}}`,
		"error for parse":  `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		"initialize as nf": `{"jsonrpc":"2.0","method":"initialize"}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			resp := h.do(t, req{session: sid, body: body})
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if b := mustRead(t, resp); b != "" {
				t.Errorf("body %q", b)
			}
		})
	}
}

func TestMethodErrors(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := []struct {
		name, body string
		code       int
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, -32601},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, -32601},
		{"no name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, -32602},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, -32602},
		{"number name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}`, -32602},
		{"array arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, -32602},
		{"string arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"x"}}`, -32602},
		{"object token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":{}}}}`, -32602},
		{"float token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1.5}}}`, -32602},
		{"bad level", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`, -32602},
		{"bad cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"???"}}`, -32602},
		{"foreign cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"YWJj"}}`, -32602},
		{"numeric cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := h.mustRPC(t, sid, tt.body)
			if errCode(v) != tt.code || v["id"] != 1.0 {
				t.Errorf("reply %v, want code %d with id 1", v, tt.code)
			}
		})
	}
}

func TestToolsCall(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := []struct{ name, params, text string }{
		{"arguments", `{"name":"echo","arguments":{"a":1}}`, `{"a":1}`},
		{"no arguments", `{"name":"echo"}`, `{}`},
		{"null arguments", `{"name":"echo","arguments":null}`, `{}`},
		{"string token", `{"name":"echo","_meta":{"progressToken":"p"}}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":`+tt.params+`}`)
			want := map[string]any{"jsonrpc": "2.0", "id": "x", "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": tt.text}},
			}}
			diff(t, "reply", want, v)
		})
	}
}
