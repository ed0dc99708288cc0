package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelay relays initialize, a notification, a tool's result, a tool
// error and a JSON-RPC error through the three kinds of the relay, to an upstream
// that answers with event streams and to one that answers with JSON, and
// checks that every answer carries the caller's own id.
func TestRelay(t *testing.T) {
	for _, json := range []bool{false, true} {
		up := upstream(t, json)
		for _, stack := range []string{"net/http", "h1", "raw"} {
			url := startRelay(t, up, stack)
			for _, tc := range []struct{ body, status, want string }{
				{`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`, "200", `{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-11-25"`},
				{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "202", ``},
				{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, "200", `{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"hi"}]}}`},
				{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, "200", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"no text"}],"isError":true}}`},
				{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, "200", `{"jsonrpc":"2.0","id":8,"error":{`},
			} {
				status, got := post(t, url, tc.body)
				if status != tc.status || !strings.HasPrefix(got, tc.want) {
					t.Errorf("json %v, %s: %s: got %s %s, want %s %s…", json, stack, tc.body, status, got, tc.status, tc.want)
				}
			}
		}
	}
}

// TestReadReplyEndsWithoutAnswer: an event stream that ends before the
// answer, and an HTTP error, are errors.
func TestReadReplyEndsWithoutAnswer(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(stream))}
	if _, err := readReply(resp, "1"); !errors.Is(err, errNoAnswer) {
		t.Errorf("a stream without the answer: got %v, want %v", err, errNoAnswer)
	}
	resp = &http.Response{StatusCode: 500, Body: io.NopCloser(strings.NewReader(""))}
	if _, err := readReply(resp, "1"); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("HTTP 500: got %v", err)
	}
}

// upstream starts a go-sdk MCP server with one tool, echo, which answers
// with its argument text, or with a tool error when there is none; json
// makes it answer POSTs with JSON rather than event streams.
func upstream(t *testing.T, json bool) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	type in struct {
		Text string `json:"text,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		if a.Text == "" {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no text"}}}, nil, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: json}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startRelay starts a relay on stack ("net/http", "h1" or "raw") to the
// upstream at up, served on a loopback port; it returns the relay's URL.
func startRelay(t *testing.T, up, stack string) string {
	t.Helper()
	run, err := start(up, stack == "h1", stack == "raw")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go run(ln) //nolint:errcheck // ends with the listener's close
	return "http://" + ln.Addr().String() + "/mcp"
}

// post sends one JSON-RPC message and returns the status and the body.
func post(t *testing.T, url, body string) (string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status[:3], string(b)
}
