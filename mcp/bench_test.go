package mcp

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// trivialGateway answers every call with one fixed text block.
type trivialGateway struct{ result *mcpgate.Result }

func (trivialGateway) ListTools(context.Context, *mcpgate.Agent) ([]ListedTool, error) {
	return nil, nil
}

func (g trivialGateway) CallTool(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
	return g.result, nil
}

// BenchmarkToolsCall measures one tools/call through ServeAgent, from the
// request body to the JSON reply, on a cached session.
func BenchmarkToolsCall(b *testing.B) {
	store := newMemStore()
	srv := New(&Options{Sessions: store, Gateway: trivialGateway{&mcpgate.Result{Raw: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}}})
	defer srv.Close()
	agent := &mcpgate.Agent{ID: "a1", MCPEnabled: true}
	cred := &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "u"}
	sid := mustBenchSession(b, srv, agent, cred)
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"inv_123","include":["lines","totals"]}}}`)
	r := httptest.NewRequest(http.MethodPost, "/a1/mcp", nil)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
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

func mustBenchSession(b *testing.B, srv *Server, agent *mcpgate.Agent, cred *mcpgate.Credential) string {
	b.Helper()
	r := httptest.NewRequest(http.MethodPost, "/a1/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	srv.ServeAgent(w, r, agent, cred)
	if w.Code != http.StatusOK {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	return w.Header().Get("Mcp-Session-Id")
}

// discardWriter is a ResponseWriter that keeps only the status, so the
// benchmark measures the server rather than a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
