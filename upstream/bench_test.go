package upstream

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchUpstream serves a tool that echoes a small structured result.
func benchUpstream(b *testing.B) *upstream {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "ok"}},
			StructuredContent: json.RawMessage(req.Params.Arguments),
		}, nil
	})
	return mustUpstream(b, s, nil)
}

// BenchmarkRelayCall measures Manager.CallTool against a local go-sdk
// upstream over Streamable HTTP; the upstream's own work is included, so
// compare with BenchmarkDirectCall.
func BenchmarkRelayCall(b *testing.B) {
	u := benchUpstream(b)
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

// BenchmarkDirectCall measures the same call made with the SDK's client
// directly, without the gateway.
func BenchmarkDirectCall(b *testing.B) {
	u := benchUpstream(b)
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: u.url()}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"city":"Oslo","days":3}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}
