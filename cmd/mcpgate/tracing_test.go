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
// params._meta and as the traceparent header, in the host's trace, and
// that a relayed prompts/get carries the header too.
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
	up.AddPrompt(&sdk.Prompt{Name: "greet"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}}, nil
	})
	var parents []string // the traceparent headers the upstream got
	url := serveUpstream(t, up, func(r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			mu.Lock()
			parents = append(parents, tp)
			mu.Unlock()
		}
	})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url), "--otlp-endpoint", sink.URL+"/v1/traces")
	_, key := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "relay", bearer(key), "2025-11-25")
	eventually(t, "the upstream's tool listed", func() bool { return listsTool(t, s, "echo") })
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	host := headers("traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	s.post(t, callBody(1, "echo", `{}`, ""), host)
	s.post(t, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet"}}`, host)
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(got, "00-"+trace+"-") || strings.Contains(got, "00f067aa0ba902b7") {
		t.Errorf("the upstream got _meta.traceparent %q, want one of trace %s under the gateway's span", got, trace)
	}
	if len(parents) != 2 || parents[0] != got || !strings.HasPrefix(parents[1], "00-"+trace+"-") || strings.Contains(parents[1], "00f067aa0ba902b7") {
		t.Errorf("the upstream got traceparent headers %q, want the tools/call's %q and one of the prompts/get's span", parents, got)
	}
}
