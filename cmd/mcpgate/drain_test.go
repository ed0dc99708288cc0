package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// holdBackend is a REST API whose /hold answers only when released.
type holdBackend struct {
	*httptest.Server
	started chan struct{}
	release chan struct{}
}

// newHoldBackend starts a holdBackend, stopped at the end of the test.
func newHoldBackend(tb testing.TB) *holdBackend {
	b := &holdBackend{started: make(chan struct{}, 1), release: make(chan struct{})}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.started <- struct{}{}
		select {
		case <-b.release:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"finished":true}`)
		case <-r.Context().Done():
		}
	}))
	tb.Cleanup(b.Close)
	return b
}

// drainConfig serves one agent whose tool "hold" waits for the backend.
const drainConfig = `users:
  - name: alice
    admin: true
agents:
  - id: shop
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: %s
        allow_private: true
        tools:
          - name: hold
            input_schema: {type: object}
            request: {method: GET, path: /hold}
`

// TestDrain: once the drain begins, /readyz and /healthz answer 503
// draining, the session's open GET stream ends with an SSE retry field
// (the client reconnects elsewhere with Last-Event-ID), a new GET stream
// is refused with 503 and Retry-After, a POST is still served; then the
// listener closes (new connections refused) while the call that was in
// flight still completes with its result, and Drain returns.
func TestDrain(t *testing.T) {
	t.Parallel()
	backend := newHoldBackend(t)
	g := mustStartMain(t, fmt.Sprintf(drainConfig, backend.URL))
	_, secret := g.mustKey(t, "alice", "")
	for _, path := range []string{"/readyz", "/healthz"} {
		send(t, http.MethodGet, g.URL()+path, nil, "").check(t, want{status: http.StatusOK})
	}
	s := g.mustInitialize(t, "shop", bearer(secret), "2025-11-25")
	stream := openStream(t, s)
	calls := make(chan *reply, 1)
	go func() {
		r, err := do(http.MethodPost, s.url, s.sessionHeader(nil), callBody(7, "hold", `{}`, ""))
		if err != nil {
			t.Errorf("call in flight: %v", err)
		}
		calls <- r
	}()
	<-backend.started

	g.StartDrain()
	for _, path := range []string{"/readyz", "/healthz"} {
		r := send(t, http.MethodGet, g.URL()+path, nil, "")
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, `"draining"`) {
			t.Errorf("%s while draining: HTTP %d %s", path, r.status, r.body)
		}
	}
	if rest := readAll(t, stream); !strings.Contains(rest, "retry: ") {
		t.Errorf("the GET stream ended without a retry field: %q", rest)
	}
	r := send(t, http.MethodGet, s.url, s.sessionHeader(headers("Accept", "text/event-stream")), "")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("new GET stream while draining: HTTP %d (Retry-After %q) %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	s.post(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil).check(t, want{status: http.StatusOK})

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	eventually(t, "the listener closes", func() bool {
		_, err := do(http.MethodGet, g.URL()+"/healthz", headers("Connection", "close"), "")
		return err != nil
	})
	close(backend.release)
	res := <-calls
	if res == nil || res.status != http.StatusOK || !strings.Contains(res.body, "finished") {
		t.Fatalf("the call in flight did not complete: %+v", res)
	}
	if err := <-drained; err != nil {
		t.Errorf("Drain: %v", err)
	}
}

// sseStream is an open GET stream, read up to its first event.
type sseStream struct {
	resp *http.Response
	rd   *bufio.Reader
}

// openStream opens the session's GET stream and reads its priming event,
// so that the stream is attached when it returns.
func openStream(tb testing.TB, s *session) *sseStream {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = s.sessionHeader(headers("Accept", "text/event-stream"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET stream: HTTP %d", resp.StatusCode)
	}
	st := &sseStream{resp: resp, rd: bufio.NewReader(resp.Body)}
	for {
		line, err := st.rd.ReadString('\n')
		if err != nil {
			tb.Fatalf("GET stream ended before its priming event: %v", err)
		}
		if line == "\n" {
			return st
		}
	}
}

// readAll reads the rest of the stream until the server ends it.
func readAll(tb testing.TB, st *sseStream) string {
	tb.Helper()
	b, err := io.ReadAll(st.rd)
	if err != nil {
		tb.Fatalf("read the GET stream: %v", err)
	}
	return string(b)
}
