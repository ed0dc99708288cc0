package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fakeRelayer is a Gateway that also relays: it declares caps and answers
// every relayed request with relay, recording what it got.
type fakeRelayer struct {
	*fakeGateway
	caps  map[string]json.RawMessage
	relay func(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error)

	mu  sync.Mutex
	got []*mcpgate.Forward
}

func (g *fakeRelayer) Capabilities(context.Context, *mcpgate.Agent) (map[string]json.RawMessage, error) {
	return g.caps, nil
}

func (g *fakeRelayer) Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	g.mu.Lock()
	g.got = append(g.got, f)
	g.mu.Unlock()
	return g.relay(ctx, f)
}

func (g *fakeRelayer) last() *mcpgate.Forward {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.got[len(g.got)-1]
}

// echoRelay answers with the method and params it got.
func echoRelay(_ context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	params := f.Params
	if params == nil {
		params = json.RawMessage("null")
	}
	return json.RawMessage(`{"method":"` + f.Method + `","params":` + string(params) + `}`), nil
}

// mustRelayHarness is a harness whose gateway relays resources and
// prompts, but not completions.
func mustRelayHarness(tb testing.TB, opts *Options) (*harness, *fakeRelayer) {
	tb.Helper()
	g := &fakeRelayer{
		fakeGateway: &fakeGateway{run: map[string]func(context.Context, *mcpgate.Call) (*mcpgate.Result, error){"echo": echoTool}},
		caps: map[string]json.RawMessage{
			"resources": json.RawMessage(`{"subscribe":true,"listChanged":true}`),
			"prompts":   json.RawMessage(`{"listChanged":true}`),
			"tools":     json.RawMessage(`{"ignored":true}`),
		},
		relay: echoRelay,
	}
	if opts == nil {
		opts = &Options{}
	}
	opts.Gateway = g
	h := mustHarness(tb, opts)
	h.gw = g.fakeGateway
	return h, g
}

func TestInitializeMergesCapabilities(t *testing.T) {
	h, _ := mustRelayHarness(t, nil)
	resp := h.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`})
	var got struct {
		Result struct {
			Capabilities json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, resp)), &got); err != nil {
		t.Fatal(err)
	}
	diff(t, "capabilities", `{"tools":{"listChanged":true},"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}}`, string(got.Result.Capabilities))
}

func TestRelayedMethods(t *testing.T) {
	h, g := mustRelayHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := []struct {
		method, params string
		want           string // the reply's result or error, as JSON
	}{
		{"resources/list", `{"cursor":"c1"}`, `{"result":{"method":"resources/list","params":{"cursor":"c1"}}}`},
		{"resources/templates/list", ``, `{"result":{"method":"resources/templates/list","params":null}}`},
		{"resources/read", `{"uri":"test://a"}`, `{"result":{"method":"resources/read","params":{"uri":"test://a"}}}`},
		{"resources/subscribe", `{"uri":"test://w"}`, `{"result":{"method":"resources/subscribe","params":{"uri":"test://w"}}}`},
		{"resources/unsubscribe", `{"uri":"test://w"}`, `{"result":{"method":"resources/unsubscribe","params":{"uri":"test://w"}}}`},
		{"prompts/list", `{}`, `{"result":{"method":"prompts/list","params":{}}}`},
		{"prompts/get", `{"name":"p","arguments":{"a":"1"}}`, `{"result":{"method":"prompts/get","params":{"name":"p","arguments":{"a":"1"}}}}`},
		{"completion/complete", `{}`, `{"error":{"code":-32601,"message":"Method not found: \"completion/complete\""}}`},
		{"resources/read", `[1]`, `{"error":{"code":-32602,"message":"Invalid params: params must be an object, not array"}}`},
		{"prompts/get", `{"_meta":{"progressToken":1.5}}`, `{"error":{"code":-32602,"message":"Invalid params: _meta.progressToken must be a string or an integer"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":3,"method":"` + tt.method + `"`
			if tt.params != "" {
				body += `,"params":` + tt.params
			}
			got := h.mustRawRPC(t, sid, body+"}")
			diff(t, "reply", `{"jsonrpc":"2.0","id":3,`+tt.want[1:], got)
		})
	}
	f := g.last()
	if f.Agent.ID != "a1" || f.SessionID != sid || f.Caller.UserID != "alice" || f.Notifier == nil || f.Client == nil {
		t.Errorf("forward %+v", f)
	}
}

func TestRelayWithoutRelayer(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	got := h.mustRawRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`)
	diff(t, "reply", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: \"prompts/list\""}}`, got)
}

func TestRelayedErrorsPassThrough(t *testing.T) {
	h, g := mustRelayHarness(t, nil)
	upstream := &mcpgate.RPCError{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"test://x"}`)}
	g.relay = func(context.Context, *mcpgate.Forward) (json.RawMessage, error) { return nil, upstream }
	h.gw.setTool("relayed", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return nil, &mcpgate.RPCError{Code: -32602, Message: "Unknown tool: relayed"}
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	tests := []struct{ name, body, want string }{
		{"relayed request", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://x"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://x"}}}`},
		{"tools/call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"relayed"}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: relayed"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff(t, "reply", tt.want, h.mustRawRPC(t, sid, tt.body))
		})
	}
}

func TestRelayedProgressStreams(t *testing.T) {
	h, g := mustRelayHarness(t, nil)
	g.relay = func(_ context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
		f.Notifier.Progress(1, 2, "half")
		f.Notifier.Log("info", "up", "hello")
		return json.RawMessage(`{"contents":[]}`), nil
	}
	sid := h.mustInit(t, "2025-11-25", nil)
	resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"test://a","_meta":{"progressToken":"pt"}}}`})
	var data []string
	for _, ev := range newSSEReader(resp).mustEvents(t) {
		data = append(data, ev.Data)
	}
	diff(t, "events", []string{
		"",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pt","progress":1,"total":2,"message":"half"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"up","data":"hello"}}`,
		`{"jsonrpc":"2.0","id":"r","result":{"contents":[]}}`,
	}, data)
}

func TestRelayedRequestCancelled(t *testing.T) {
	h, g := mustRelayHarness(t, nil)
	started, stopped := make(chan struct{}), make(chan error, 1)
	g.relay = func(ctx context.Context, _ *mcpgate.Forward) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}
	sid := h.mustInit(t, "2025-11-25", nil)
	out := h.async(t, req{session: sid, body: `{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"slow"}}`})
	<-started
	h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`})
	if err := <-stopped; err != context.Canceled {
		t.Errorf("relay ended with %v", err)
	}
	resp := <-out
	defer resp.Body.Close()
	if body := mustRead(t, resp); !strings.Contains(body, "-32800") {
		t.Errorf("reply %q", body)
	}
}
