package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestBatch(t *testing.T) {
	h := mustHarness(t, nil)
	mixed := `[{"jsonrpc":"2.0","id":1,"method":"ping"},
		{"jsonrpc":"2.0","method":"notifications/initialized"},
		{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"k":"v"}}},
		{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}},
		{"jsonrpc":"2.0","id":4},
		7]`
	tests := []struct {
		version, body string
		status        int
		want          string // JSON; "" for no body
	}{
		{"2025-03-26", mixed, 200, `[
			{"jsonrpc":"2.0","id":1,"result":{}},
			{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"k\":\"v\"}"}]}},
			{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: initialize must not be part of a batch"}},
			{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request: \"method\" is missing"}},
			{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch element must be a JSON-RPC object"}}]`},
		{"2025-03-26", `[{"jsonrpc":"2.0","id":5,"METHOD":"ping"},{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}]`, 200, `[
			{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: member names are case-sensitive: \"METHOD\" is not \"method\""}},
			{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: duplicate member \"id\""}}]`},
		{"2024-11-05", `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"r","result":{}}]`, 202, ""},
		{"2025-06-18", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,
			"message":"Invalid Request: JSON-RPC batching was removed in protocol version 2025-06-18 and this session speaks 2025-06-18; send one message per POST"}}`},
		{"2025-11-25", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,
			"message":"Invalid Request: JSON-RPC batching was removed in protocol version 2025-06-18 and this session speaks 2025-11-25; send one message per POST"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			sid := h.mustInit(t, tt.version, nil)
			resp := h.do(t, req{session: sid, body: tt.body})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			got := mustRead(t, resp)
			if tt.want == "" {
				diff(t, "body", "", got)
				return
			}
			var w, g any
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &g); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			diff(t, "batch reply", w, g)
		})
	}
}

func TestBatchNeedsSession(t *testing.T) {
	h := mustHarness(t, nil)
	resp := h.do(t, req{body: `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]`})
	v := mustJSON(t, mustRead(t, resp))
	if resp.StatusCode != http.StatusBadRequest || errCode(v) != codeInvalidRequest {
		t.Fatalf("status %d, reply %v", resp.StatusCode, v)
	}
}

func TestToolsListPagination(t *testing.T) {
	h := mustHarness(t, &Options{PageSize: 3})
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, n := range names {
		h.gw.tools = append(h.gw.tools, ListedTool{Name: n, JSON: json.RawMessage(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, n))})
	}
	sid := h.mustInit(t, "2025-11-25", nil)

	t.Run("all pages", func(t *testing.T) {
		var got []string
		var pages int
		cursor := ""
		for {
			params := `{}`
			if cursor != "" {
				params = `{"cursor":"` + cursor + `"}`
			}
			res := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`)["result"].(map[string]any)
			pages++
			for _, tool := range res["tools"].([]any) {
				got = append(got, tool.(map[string]any)["name"].(string))
			}
			next, ok := res["nextCursor"].(string)
			if !ok {
				break
			}
			cursor = next
		}
		diff(t, "names", names, got)
		diff(t, "pages", 3, pages)
	})

	t.Run("stable when the list changes", func(t *testing.T) {
		res := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)["result"].(map[string]any)
		cursor := res["nextCursor"].(string)
		h.gw.mu.Lock()
		saved := h.gw.tools
		h.gw.tools = append([]ListedTool{}, saved[:2]...) // "c", the last tool served, goes away
		h.gw.tools = append(h.gw.tools, saved[3:]...)
		h.gw.mu.Unlock()
		defer func() { h.gw.tools = saved }()
		res = h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"`+cursor+`"}}`)["result"].(map[string]any)
		var got []string
		for _, tool := range res["tools"].([]any) {
			got = append(got, tool.(map[string]any)["name"].(string))
		}
		diff(t, "second page", []string{"d", "e", "f"}, got)
	})

	t.Run("tools served as given", func(t *testing.T) {
		resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
		body := mustRead(t, resp)
		if !strings.Contains(body, `"tools":[{"name":"a","inputSchema":{"type":"object"}},`) {
			t.Errorf("body %s", body)
		}
	})
}
