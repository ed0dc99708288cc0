package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTraceReachesUpstream checks that with tracing on, a relayed tool's
// upstream MCP server receives the call's W3C trace context in
// params._meta, in the host's trace.
func TestTraceReachesUpstream(t *testing.T) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	t.Cleanup(sink.Close)
	var mu sync.Mutex
	var got string
	up := sdk.NewServer(&sdk.Implementation{Name: "traced-upstream", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		got, _ = req.Params.Meta["traceparent"].(string)
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	url := serveUpstream(t, up, func(*http.Request) {})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url), "--otlp-endpoint", sink.URL+"/v1/traces")
	_, key := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "relay", bearer(key), "2025-11-25")
	eventually(t, "the upstream's tool listed", func() bool { return listsTool(t, s, "echo") })
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	s.post(t, callBody(1, "echo", `{}`, ""), headers("traceparent", "00-"+trace+"-00f067aa0ba902b7-01"))
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(got, "00-"+trace+"-") || strings.Contains(got, "00f067aa0ba902b7") {
		t.Errorf("the upstream got _meta.traceparent %q, want one of trace %s under the gateway's span", got, trace)
	}
}
