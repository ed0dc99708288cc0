package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// hangGuard is how long a test waits for something that, when the code is
// right, happens at once; it turns a deadlock into a failure.
const hangGuard = 30 * time.Second

func waitFor(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		tb.Fatalf("still waiting for %s after %v", what, hangGuard)
	}
}

// TestStalledClientBlocksNothing sends a tools/call over a raw connection
// that never reads its reply, while the tool logs far more than socket
// buffers hold: the tool's Notifier must not block, DELETE must end the
// session, and the handler must give up on the client after the write
// timeout.
func TestStalledClientBlocksNothing(t *testing.T) {
	h := mustHarness(t, &Options{WriteTimeout: 100 * time.Millisecond, KeepAlive: 10 * time.Millisecond})
	sent, quit := make(chan struct{}), make(chan struct{})
	h.gw.setTool("flood", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		big := strings.Repeat("x", 256<<10)
		for range 128 { // 32 MiB
			call.Notifier.Log("error", "flood", big)
		}
		close(sent)
		select {
		case <-ctx.Done():
		case <-quit: // the test failed
		}
		return nil, context.Cause(ctx)
	})
	returned := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		h.srv.ServeAgent(w, r, &mcpgate.Agent{ID: "a1", MCPEnabled: true}, &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "alice"})
	}))
	defer stalled.Close()
	defer close(quit)
	sid := h.mustInit(t, "2025-11-25", nil)

	conn := mustSendRaw(t, stalled.Listener.Addr().String(), sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood"}}`)
	defer conn.Close()
	waitFor(t, sent, "the tool's Notifier")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if resp := h.doCtx(t, ctx, req{method: http.MethodDelete, session: sid}); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	waitFor(t, returned, "the handler to give up on the client")
}

// mustSendRaw sends a POST to an agent a1 endpoint over a new connection
// and returns the connection, unread.
func mustSendRaw(tb testing.TB, addr, sid, body string) net.Conn {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	if err := conn.(*net.TCPConn).SetReadBuffer(16 << 10); err != nil { // no autotuning
		tb.Fatal(err)
	}
	_, err = fmt.Fprintf(conn, "POST /a1/mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
		addr, sid, len(body), body)
	if err != nil {
		tb.Fatal(err)
	}
	return conn
}

func TestConnSinkLimits(t *testing.T) {
	big := make([]byte, sinkBytes+1)
	small := []byte("e")
	tests := []struct {
		name   string
		writes [][]byte
		want   []bool
	}{
		{"oversized event alone", [][]byte{big}, []bool{true}},
		{"oversized event after another", [][]byte{small, big}, []bool{true, false}},
		{"bytes", [][]byte{make([]byte, sinkBytes-1), small, small}, []bool{true, true, false}},
		{"events", append(make([][]byte, 0, sinkEvents+1), repeat(small, sinkEvents+1)...), append(repeatBool(true, sinkEvents), false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sk := newConnSink()
			var got []bool
			for _, p := range tt.writes {
				got = append(got, sk.write(p))
			}
			diff(t, "accepted", tt.want, got)
			sk.close()
			if sk.write(small) {
				t.Error("a closed sink took an event")
			}
			if q, closed := sk.take(); !closed || len(q) != strings.Count(fmt.Sprint(tt.want), "true") {
				t.Errorf("take: %d events, closed=%v", len(q), closed)
			}
		})
	}
}

func repeat(p []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func repeatBool(b bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = b
	}
	return out
}
