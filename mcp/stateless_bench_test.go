package mcp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// BenchmarkToolsCallStateless is BenchmarkToolsCall for a 2026-07-28
// caller: the same call with no session to look up, but the headers to
// check against the body, the per-request _meta to read and the result to
// extend with resultType and serverInfo.
func BenchmarkToolsCallStateless(b *testing.B) {
	srv := New(&Options{Sessions: newMemStore(), Gateway: trivialGateway{&mcpgate.Result{Raw: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}}})
	defer srv.Close()
	agent := &mcpgate.Agent{ID: "a1", MCPEnabled: true}
	cred := &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "u"}
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"inv_123","include":["lines","totals"]},` + modernMeta + `}}`)
	r := httptest.NewRequest(http.MethodPost, "/a1/mcp", nil)
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_invoice"} {
		r.Header.Set(k, v)
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		rd := bytes.NewReader(body)
		r.Body, r.ContentLength = nopCloser{rd}, int64(len(body))
		clear(w.h)
		w.status = 0
		srv.ServeAgent(w, r, agent, cred)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}
