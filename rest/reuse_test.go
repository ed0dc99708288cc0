package rest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/netguard"
)

// TestConnectionsAreReused counts the connections the API sees: calls one
// after another share one kept-alive connection, whatever the method and
// status, so no call pays a new TCP handshake.
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"no such thing"}`)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	backend := New(nil)
	for _, c := range []struct {
		name string
		req  *mcpgate.Request
		args string
	}{
		{"GET", &mcpgate.Request{Path: "/things/{id}"}, `{"id":"a"}`},
		{"POST with a body", &mcpgate.Request{Method: "POST", Path: "/things", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyAll}}, `{"name":"b","n":2}`},
		{"an error status", &mcpgate.Request{Path: "/missing"}, `{}`},
	} {
		before := conns.Load()
		call := newCall(srv.URL, c.req, c.args)
		for range 10 {
			mustCall(t, backend, call)
		}
		if n := conns.Load() - before; n > 1 {
			t.Errorf("%s: 10 calls opened %d connections, want at most 1", c.name, n)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("30 calls opened %d connections, want 1", n)
	}
}

// TestPlainHTTPOverH1: both policies' clients send plain-HTTP requests
// through h1 (no net/http connection goroutines per call) with the
// guard's redirect check, and leave HTTPS to the guard's transport.
func TestPlainHTTPOverH1(t *testing.T) {
	b := New(nil)
	for _, p := range []netguard.Policy{{}, {AllowPrivate: true}} {
		c := b.client(p)
		tr, ok := c.Transport.(*h1.Transport)
		if !ok {
			t.Fatalf("policy %+v: transport %T, want *h1.Transport", p, c.Transport)
		}
		if tr.Next != b.guard.Client(p).Transport {
			t.Errorf("policy %+v: HTTPS does not go to the guard's transport", p)
		}
		if c.CheckRedirect == nil {
			t.Errorf("policy %+v: no redirect check", p)
		}
	}
}
