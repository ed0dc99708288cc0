package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"
)

// A POST's request is built from the URL parsed once, with one value for
// its body; a redirect still gets the body again.
func TestRequestAllocs(t *testing.T) {
	tr := NewHTTP("http://127.0.0.1:1/mcp", nil, http.Header{"Authorization": {"Bearer x"}}).(*httpTransport)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	req, err := tr.request(context.Background(), http.MethodPost, msg)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://127.0.0.1:1/mcp" || req.Host != "127.0.0.1:1" || req.ContentLength != int64(len(msg)) || req.Header.Get("Authorization") != "Bearer x" {
		t.Fatalf("request %s %q %d %v", req.URL, req.Host, req.ContentLength, req.Header)
	}
	getBody(req)
	for range 2 {
		b, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(b); string(got) != string(msg) {
			t.Fatalf("GetBody gave %q", got)
		}
	}
	if got, _ := io.ReadAll(req.Body); string(got) != string(msg) {
		t.Fatalf("the body is %q", got)
	}
	tr.negotiated(ProtocolVersion)
	tr.session, tr.sessionHdr = "s1", []string{"s1"}
	n := testing.AllocsPerRun(100, func() { tr.request(context.Background(), http.MethodPost, msg) })
	if n > 5 { // the request, its URL, its header map and its body; the session's headers are made once
		t.Errorf("building a request allocates %v times, want at most 5", n)
	}
	if _, err := NewHTTP("http://[::1", nil, nil).(*httpTransport).request(context.Background(), http.MethodPost, msg); err == nil {
		t.Error("a URL that does not parse gave a request")
	}
}

// headerSeen records the Header of every POST a client sends.
type headerSeen struct {
	next http.RoundTripper
	mu   sync.Mutex
	hdrs []http.Header
}

func (h *headerSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		h.mu.Lock()
		h.hdrs = append(h.hdrs, req.Header)
		h.mu.Unlock()
	}
	return h.next.RoundTrip(req)
}

// POSTs that add no header of their own share one Header with the
// session's, made again once the session is known; one that adds headers
// gets its own, and the shared one never holds them.
func TestPostsShareOneHeader(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[]}}`)
	}}
	seen := &headerSeen{next: http.DefaultTransport}
	s := connect(t, NewHTTP(serveFake(t, f), &http.Client{Transport: seen}, http.Header{"Authorization": {"Bearer x"}}), nil)
	for range 2 {
		if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"x"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"x"}`), &CallOptions{Header: http.Header{"Traceparent": {"00-1-2-01"}}}); err != nil {
		t.Fatal(err)
	}
	n := len(seen.hdrs)
	a, b, traced := seen.hdrs[n-3], seen.hdrs[n-2], seen.hdrs[n-1]
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("two tools/calls got two Headers")
	}
	for _, h := range []http.Header{a, traced} {
		if h.Get("Mcp-Session-Id") != "sess-1" || h.Get("Mcp-Protocol-Version") != ProtocolVersion || h.Get("Authorization") != "Bearer x" ||
			h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json, text/event-stream" {
			t.Errorf("a tools/call's Header is %v", h)
		}
	}
	if traced.Get("Traceparent") == "" || a.Get("Traceparent") != "" {
		t.Errorf("the traced call's Header %v, the shared one %v", traced, a)
	}
	if first := seen.hdrs[0]; first.Get("Mcp-Session-Id") != "" {
		t.Errorf("the first POST, before the session, carried %v", first)
	}
}
