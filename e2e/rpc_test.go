package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rpcSession is a raw JSON-RPC MCP session, for checks below what an SDK
// shows.
type rpcSession struct {
	t       *testing.T
	url     string
	headers map[string]string
	id      string
}

// rpcResponse is a JSON-RPC reply with its HTTP status.
type rpcResponse struct {
	Status int
	Header http.Header
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Body string
}

// openSession initializes a session.
func openSession(t *testing.T, url string, headers map[string]string) *rpcSession {
	t.Helper()
	s := &rpcSession{t: t, url: url, headers: headers}
	r := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	s.id = r.Header.Get("Mcp-Session-Id")
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// post sends one message in the session.
func (s *rpcSession) post(body string) *rpcResponse {
	s.t.Helper()
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := &rpcResponse{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
	if i := bytes.Index(b, []byte("data: {")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	_ = json.Unmarshal(b, r)
	return r
}

// lastEventData returns the data of an SSE stream's last event.
func lastEventData(b []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 {
			last = d
		}
	}
	return last
}

// toolNames lists the session's tools (first page).
func (s *rpcSession) toolNames() []string {
	s.t.Helper()
	r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		s.t.Fatalf("tools/list: HTTP %d %s", r.Status, r.Body)
	}
	names := make([]string, len(res.Tools))
	for i, tool := range res.Tools {
		names[i] = tool.Name
	}
	return names
}
