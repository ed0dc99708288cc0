package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestGatewayErrors checks how CallTool errors reach the client.
func TestGatewayErrors(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := []struct {
		name string
		err  error
		want map[string]any
	}{
		{"invalid", mcpgate.Errorf(mcpgate.EINVALID, "bad args"), map[string]any{"code": -32602.0, "message": "bad args"}},
		{"not found", mcpgate.Errorf(mcpgate.ENOTFOUND, "no such tool"), map[string]any{"code": -32601.0, "message": "no such tool"}},
		{"timeout", mcpgate.Errorf(mcpgate.ETIMEOUT, "too slow"), map[string]any{"code": -32003.0, "message": "too slow",
			"data": map[string]any{"reason": "timeout", "status": 504.0}}},
		{"unavailable", mcpgate.Errorf(mcpgate.EUNAVAILABLE, "down"), map[string]any{"code": -32000.0, "message": "down",
			"data": map[string]any{"reason": "agent_service_unavailable", "status": 503.0}}},
		{"rate limited", &mcpgate.Error{Code: mcpgate.ERATELIMIT, Message: "slow down", RetryAfterMS: 1500}, map[string]any{"code": -32000.0, "message": "slow down",
			"data": map[string]any{"reason": "rate_limited", "status": 429.0, "retry_after_ms": 1500.0}}},
		{"conflict", mcpgate.Errorf(mcpgate.ECONFLICT, "in flight"), map[string]any{"code": -32000.0, "message": "in flight",
			"data": map[string]any{"reason": "conflict", "status": 409.0}}},
		{"idempotency mismatch", mcpgate.Errorf(mcpgate.EMISMATCH, "other args"), map[string]any{"code": -32000.0, "message": "other args",
			"data": map[string]any{"reason": "idempotency_mismatch", "status": 422.0}}},
		{"invalid param", mcpgate.Errorf(mcpgate.EINVALIDPARAM, "attachments[0]"), map[string]any{"code": -32000.0, "message": "attachments[0]",
			"data": map[string]any{"reason": "invalid_param", "status": 400.0}}},
		{"forbidden", mcpgate.Errorf(mcpgate.EFORBIDDEN, "no"), map[string]any{"code": -32000.0, "message": "no",
			"data": map[string]any{"reason": "forbidden", "status": 403.0}}},
		{"cancelled", mcpgate.Errorf(mcpgate.ECANCELED, "gone"), map[string]any{"code": -32800.0, "message": "Request cancelled"}},
		{"internal", errors.New("db password wrong"), map[string]any{"code": -32603.0, "message": "Internal error."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.gw.setTool("fail", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) { return nil, tt.err })
			v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail"}}`)
			diff(t, "error", tt.want, v["error"])
		})
	}
	t.Run("nil result", func(t *testing.T) {
		h.gw.setTool("nil", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) { return nil, nil })
		if v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nil"}}`); errCode(v) != codeInternal {
			t.Errorf("reply %v", v)
		}
	})
	t.Run("raw result relayed as is", func(t *testing.T) {
		raw := `{"content":[{"type":"text","text":"x"}],"isError":true,"_meta":{"k":1}}`
		h.gw.setTool("raw", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
			return &mcpgate.Result{Raw: []byte(raw)}, nil
		})
		resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"raw"}}`})
		diff(t, "body", `{"jsonrpc":"2.0","id":1,"result":`+raw+`}`, mustRead(t, resp))
	})
}

func TestWriteHTTPError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		retryAfter string
		body       string
	}{
		{"unauthorized", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "who are you"), 401, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"who are you","data":{"reason":"unauthorized","status":401}}}`},
		{"idempotency mismatch", mcpgate.Errorf(mcpgate.EMISMATCH, "other args"), 422, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"other args","data":{"reason":"idempotency_mismatch","status":422}}}`},
		{"forbidden", mcpgate.Errorf(mcpgate.EFORBIDDEN, "no"), 403, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no","data":{"reason":"forbidden","status":403}}}`},
		{"not found", mcpgate.Errorf(mcpgate.ENOTFOUND, "gone"), 404, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"gone","data":{"reason":"not_found","status":404}}}`},
		{"invalid", mcpgate.Errorf(mcpgate.EINVALID, "bad"), 400, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"bad","data":{"reason":"invalid","status":400}}}`},
		{"too large", mcpgate.Errorf(mcpgate.ETOOLARGE, "big"), 413, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"big","data":{"reason":"too_large","status":413}}}`},
		{"rate limited", &mcpgate.Error{Code: mcpgate.ERATELIMIT, Message: "wait", RetryAfterMS: 2001}, 429, "3",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"wait","data":{"reason":"rate_limited","status":429,"retry_after_ms":2001}}}`},
		{"unavailable", mcpgate.Errorf(mcpgate.EUNAVAILABLE, "down"), 503, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"down","data":{"reason":"agent_service_unavailable","status":503}}}`},
		{"internal", errors.New("secret detail"), 500, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error.","data":{"reason":"internal","status":500}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			WriteHTTPError(w, tt.err)
			diff(t, "response", []any{tt.status, "application/json", tt.retryAfter, tt.body},
				[]any{w.Code, w.Header().Get("Content-Type"), w.Header().Get("Retry-After"), w.Body.String()})
		})
	}
}

func TestParseAccept(t *testing.T) {
	tests := []struct {
		header []string
		want   accepts
	}{
		{nil, accepts{json: true, sse: true}},
		{[]string{"application/json, text/event-stream"}, accepts{json: true, sse: true}},
		{[]string{"application/json", "text/event-stream"}, accepts{json: true, sse: true}},
		{[]string{"*/*"}, accepts{json: true, sse: true}},
		{[]string{"text/event-stream, application/json"}, accepts{json: true, sse: true, preferSSE: true}},
		{[]string{"text/event-stream", "*/*"}, accepts{json: true, sse: true, preferSSE: true}},
		{[]string{"application/json;q=0.5, text/event-stream"}, accepts{json: true, sse: true, preferSSE: true}},
		{[]string{"text/event-stream;q=0.8, application/json"}, accepts{json: true, sse: true}},
		{[]string{"*/*, text/event-stream"}, accepts{json: true, sse: true}},
		{[]string{"application/*;q=0.5"}, accepts{json: true}},
		{[]string{"TEXT/Event-Stream"}, accepts{sse: true}},
		{[]string{"text/event-stream;q=0, application/json"}, accepts{json: true}},
		{[]string{"text/html"}, accepts{}},
		{[]string{""}, accepts{}},
	}
	for _, tt := range tests {
		t.Run(acceptName(tt.header), func(t *testing.T) {
			if got := parseAccept(tt.header); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func acceptName(h []string) string {
	if h == nil {
		return "absent"
	}
	if len(h) == 1 && h[0] == "" {
		return "empty"
	}
	return h[0]
}

func TestDescribeDecodeError(t *testing.T) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Roots struct{} `json:"roots"`
		} `json:"capabilities"`
	}
	tests := map[string]string{
		`[1,2]`:                          "Invalid params: params must be an object, not array",
		`{"protocolVersion":5}`:          "Invalid params: protocolVersion must be a string, not number",
		`{"capabilities":{"roots":[1]}}`: "Invalid params: capabilities.roots must be an object, not array",
	}
	for in, want := range tests {
		err := unmarshalParams(json.RawMessage(in), &p)
		if got := mcpgate.ErrorMessage(err); got != want {
			t.Errorf("unmarshalParams(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestMetaDecodeError checks that a malformed _meta is named by its JSON
// path, by tools/call and by relayed requests alike.
func TestMetaDecodeError(t *testing.T) {
	params := json.RawMessage(`{"name":"x","_meta":5}`)
	_, _, _, callErr := parseCall(params)
	_, relayErr := parseProgressToken(params)
	want := "Invalid params: _meta must be an object, not number"
	diff(t, "errors", []string{want, want}, []string{mcpgate.ErrorMessage(callErr), mcpgate.ErrorMessage(relayErr)})
}

// headerWriter is a ResponseWriter that keeps one header map and
// discards the body.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(int)             {}
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }

// A JSON reply's Content-Type is one value shared by all replies: only
// its length is made for it.
func TestWriteJSONAllocs(t *testing.T) {
	w := &headerWriter{h: http.Header{}}
	body := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"This is a simple text response for testing."}]}}`)
	writeJSON(w, http.StatusOK, body)
	if got := w.h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := w.h.Get("Content-Length"); got != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q, want %d", got, len(body))
	}
	if n := testing.AllocsPerRun(100, func() { writeJSON(w, http.StatusOK, body) }); n > 2 {
		t.Errorf("writeJSON allocates %v times, want at most 2 (the length and its value)", n)
	}
}
