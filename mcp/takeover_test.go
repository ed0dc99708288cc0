package mcp

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestGetStreamTakesItsConnection: on HTTP/1.1 a GET stream's handler returns
// once the stream has started, and the stream goes on without it: it
// delivers notifications, counts as open and keeps its session active, and
// ends its body cleanly when the session ends. A client that leaves ends
// the stream too.
func TestGetStreamTakesItsConnection(t *testing.T) {
	h := mustHarness(t, &Options{KeepAlive: 10 * time.Millisecond})
	returned := make(chan struct{}, 2)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hs.Config.Handler.ServeHTTP(w, r)
		if r.Method == http.MethodGet {
			returned <- struct{}{}
		}
	}))
	t.Cleanup(hs.Close)
	h.url = hs.URL + "/a1/mcp"
	sse := map[string]string{"Accept": "text/event-stream"}

	sid := h.mustInit(t, "2025-11-25", nil)
	resp := h.do(t, req{method: http.MethodGet, session: sid, header: sse})
	if !resp.Close {
		t.Error("the GET stream's response does not say its connection closes at its end")
	}
	r := newSSEReader(resp)
	r.mustEvent(t) // priming
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream's handler did not return while its stream was open")
	}
	if n := h.srv.OpenStreams(); n != 1 {
		t.Errorf("OpenStreams = %d with one stream off its handler, want 1", n)
	}
	if n := h.active(sid); n != 1 {
		t.Errorf("the stream's session counts %d requests active, want 1", n)
	}
	h.srv.NotifyToolsChanged("a1")
	diff(t, "notification", toolsChanged, r.mustEvent(t).Data)
	if resp := h.do(t, req{method: http.MethodDelete, session: sid}); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if rest := r.mustEvents(t); len(rest) != 0 { // to a clean end of the chunked body
		t.Errorf("events after DELETE: %v", rest)
	}
	h.waitStreams(t, 0, "the session ended")

	other := h.mustInit(t, "2025-11-25", nil)
	get := h.do(t, req{method: http.MethodGet, session: other, header: sse})
	newSSEReader(get).mustEvent(t)
	<-returned
	h.waitStreams(t, 1, "a second stream opened")
	get.Body.Close() // unread: the client closes the connection
	h.waitStreams(t, 0, "its client left")
	deadline := time.Now().Add(10 * time.Second)
	for h.active(other) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the session counts %d requests active after its stream ended, want 0", h.active(other))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStreams waits until the server has n streams open, after what.
func (h *harness) waitStreams(tb testing.TB, n int, what string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.srv.OpenStreams() != n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d streams open %v after %s, want %d", h.srv.OpenStreams(), 10*time.Second, what, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// active returns how many requests session sid counts as active.
func (h *harness) active(sid string) int32 {
	h.srv.mu.RLock()
	defer h.srv.mu.RUnlock()
	ls := h.srv.live[sid]
	if ls == nil {
		return -1
	}
	return ls.active.Load()
}

// TestCloseEndsTakenOverStreams: Close returns once the GET streams that
// took their connections over have ended their bodies.
func TestCloseEndsTakenOverStreams(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	r := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream"}}))
	r.mustEvent(t) // priming
	h.waitStreams(t, 1, "the stream opened")
	h.srv.Close()
	if n := h.srv.OpenStreams(); n != 0 {
		t.Errorf("OpenStreams = %d once Close returned, want 0", n)
	}
	if rest := r.mustEvents(t); len(rest) != 0 { // to a clean end of the chunked body
		t.Errorf("events after Close: %v", rest)
	}
}

// TestTakenOverStreamOutlivesServerTimeouts: a stream that took its
// connection over is not ended by the read deadlines net/http's server
// set on the connection for the request's head or for idling.
func TestTakenOverStreamOutlivesServerTimeouts(t *testing.T) {
	h := mustHarness(t, nil)
	hs := httptest.NewUnstartedServer(h.hs.Config.Handler)
	hs.Config.ReadHeaderTimeout, hs.Config.IdleTimeout = 20*time.Millisecond, 20*time.Millisecond
	hs.Start()
	t.Cleanup(hs.Close)
	h.url = hs.URL + "/a1/mcp"
	sid := h.mustInit(t, "2025-11-25", nil)
	r := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream"}}))
	r.mustEvent(t) // priming
	time.Sleep(10 * hs.Config.ReadHeaderTimeout)
	h.srv.NotifyToolsChanged("a1")
	diff(t, "notification after the server's timeouts", toolsChanged, r.mustEvent(t).Data)
	if n := h.srv.OpenStreams(); n != 1 {
		t.Errorf("OpenStreams = %d, want 1", n)
	}
}
