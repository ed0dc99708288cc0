package rest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
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
