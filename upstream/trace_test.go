package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A traced tools/call carries its W3C trace context to the upstream as
// HTTP headers and in params._meta; an untraced one carries neither.
func TestCallToolCarriesTrace(t *testing.T) {
	var mu sync.Mutex
	var headers, metas []string
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				mu.Lock()
				headers = append(headers, r.Header.Get("traceparent")+" "+r.Header.Get("tracestate"))
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		ts, _ := req.Params.Meta["tracestate"].(string)
		mu.Lock()
		metas = append(metas, tp+" "+ts)
		mu.Unlock()
		return &sdk.CallToolResult{}, nil
	})
	u := mustUpstream(t, s, wrap)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	traced := callOf(sk, "ping", `{}`)
	traced.Trace = mcpgate.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "vendor=x"}
	for _, call := range []*mcpgate.Call{traced, callOf(sk, "ping", `{}`)} {
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{traced.Trace.Parent + " vendor=x", " "}
	mu.Lock()
	defer mu.Unlock()
	if len(headers) != 2 || len(metas) != 2 || headers[0] != want[0] || metas[0] != want[0] || headers[1] != want[1] || metas[1] != want[1] {
		t.Errorf("the upstream got headers %q and _meta %q, want %q", headers, metas, want)
	}
}
