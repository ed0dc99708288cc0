package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayConfig is a config file with one agent whose skill is the upstream
// MCP server at UPSTREAM.
const relayConfig = `users:
  - name: alice
agents:
  - id: relay
    owner: alice
    mcp_enabled: true
    skills:
      - name: up
        kind: mcp
        url: UPSTREAM
        allow_private: true
`

// TestEventsReachTheirParts runs the events wire passes against the order
// it builds the parts in, through the real binary's Main: the registry's
// first load starts the upstream link (skills loaded), the tools it
// discovers reach the registry without the periodic reload (skills stored),
// an upstream's new tool and new prompt reach an open session (tools
// changed, notify agent), and a session's DELETE ends the upstream session
// it had of its own (session closed).
func TestEventsReachTheirParts(t *testing.T) {
	up := sdk.NewServer(&sdk.Implementation{Name: "events-upstream", Version: "1"}, nil)
	addTextTool(up, "echo")
	addPrompt(up, "hello") // so that the upstream offers prompts at initialize
	var deletes atomic.Int32
	url := serveUpstream(t, up, func(r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
	})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url), "--reload-every", "1h")
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitializeWith(t, "relay", bearer(oag), `{"sampling":{}}`)
	eventually(t, "the upstream's tool echo listed", func() bool { return listsTool(t, s, "echo") })

	events := openGetStream(t, s)
	addTextTool(up, "echo2")
	addPrompt(up, "greet")
	waitForEvents(t, events, "notifications/tools/list_changed", "notifications/prompts/list_changed")

	res, _ := s.call(t, "echo", `{}`).mustToolResult(t)
	if res.IsError {
		t.Fatalf("echo failed: %+v", res)
	}
	before := deletes.Load()
	send(t, http.MethodDelete, s.url, s.sessionHeader(nil), "").check(t, want{status: http.StatusOK})
	eventually(t, "the session's own upstream session deleted", func() bool { return deletes.Load() > before })
}

// addTextTool adds a tool answering "ok" to an upstream server.
func addTextTool(s *sdk.Server, name string) {
	s.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
}

// addPrompt adds an empty prompt to an upstream server.
func addPrompt(s *sdk.Server, name string) {
	s.AddPrompt(&sdk.Prompt{Name: name}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{}, nil
	})
}

// serveUpstream serves s over Streamable HTTP on 127.0.0.1, calling seen
// with each request first, and returns its URL.
func serveUpstream(t testing.TB, s *sdk.Server, seen func(*http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// mustInitializeWith opens a session on agentID whose client declares
// capabilities, and sends notifications/initialized.
func (g *testGateway) mustInitializeWith(tb testing.TB, agentID string, h http.Header, capabilities string) *session {
	tb.Helper()
	s := &session{g: g, url: g.mcpURL(agentID), header: h, version: "2025-11-25"}
	r := send(tb, http.MethodPost, s.url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"test","version":"1"}}}`, s.version, capabilities))
	if r.status != http.StatusOK || r.rpc.Error != nil {
		tb.Fatalf("initialize: HTTP %d\n%s", r.status, r.body)
	}
	s.id = r.header.Get("Mcp-Session-Id")
	s.post(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).check(tb, want{status: http.StatusAccepted})
	return s
}

// listsTool reports whether the session's tools/list names the tool.
func listsTool(t testing.TB, s *session, name string) bool {
	r := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
	return strings.Contains(r.body, fmt.Sprintf(`"name":%q`, name))
}

// waitForEvents waits up to 10s for events on the stream naming each of
// methods, in any order.
func waitForEvents(t *testing.T, events <-chan sseEvent, methods ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(methods) > 0 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the GET stream ended before %q", methods)
			}
			methods = slices.DeleteFunc(methods, func(m string) bool { return strings.Contains(ev.Data, `"method":"`+m+`"`) })
		case <-deadline:
			t.Fatalf("no %q on the GET stream", methods)
		}
	}
}
