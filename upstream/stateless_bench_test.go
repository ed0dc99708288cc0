package upstream

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRelayCallStateless is BenchmarkRelayCall against the same tool
// served by a stateless (2026-07-28) go-sdk upstream: the per-request
// _meta and headers instead of a session.
func BenchmarkRelayCallStateless(b *testing.B) {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "ok"}},
			StructuredContent: json.RawMessage(req.Params.Arguments),
		}, nil
	})
	u := mustUpstreamWith(b, s, &sdk.StreamableHTTPOptions{Stateless: true}, nil)
	m := newManager(b, nil, nil, nil)
	call := callOf(httpSkill("bench", u.url()), "echo", `{"city":"Oslo","days":3}`)
	if _, err := m.CallTool(context.Background(), call); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.CallTool(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
