package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/h1"
)

// countingPoster is h1's transport, counting the POSTs that go through
// Post and those that go through RoundTrip.
type countingPoster struct {
	*h1.Transport
	posts, trips atomic.Int32
}

func (c *countingPoster) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		c.trips.Add(1)
	}
	return c.Transport.RoundTrip(req)
}

func (c *countingPoster) Post(ctx context.Context, u *url.URL, fields, body []byte, names []string) (int, []string, io.ReadCloser, error) {
	c.posts.Add(1)
	return c.Transport.Post(ctx, u, fields, body, names)
}

// newCountingPoster is a countingPoster on a plain dialer.
func newCountingPoster(t *testing.T) *countingPoster {
	var d net.Dialer
	c := &countingPoster{Transport: &h1.Transport{Dial: d.DialContext, Next: http.DefaultTransport}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// Over a transport that posts (h1's), a session's messages go through
// Post, with the session's headers and the caller's, and their replies
// (JSON, an event stream) are read as before; so does a call with headers
// of its own, which take the place of the session's of the same name.
func TestMessagesGoThroughPost(t *testing.T) {
	var sawKey atomic.Int32
	var keys atomic.Value
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseEvent(w, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"ok":true}}`)
	}}
	fakeURL := serveFake(t, f)
	check := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("X-Key") == "secret" {
			sawKey.Add(1)
		}
		keys.Store(strings.Join(r.Header.Values("X-Key"), ",") + " " + r.Header.Get("X-Extra"))
		r.URL, _ = url.Parse(fakeURL + r.URL.Path)
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(check.Close)
	cp := newCountingPoster(t)
	s := connect(t, NewHTTP(check.URL+"/mcp", &http.Client{Transport: cp}, http.Header{"X-Key": {"secret"}}), nil)
	posts0, trips0 := cp.posts.Load(), cp.trips.Load()
	if posts0 == 0 {
		t.Error("initialize did not go through Post")
	}
	for range 3 {
		res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
		if err != nil || string(res) != `{"ok":true}` {
			t.Fatalf("call: %s, %v", res, err)
		}
	}
	posts, trips := cp.posts.Load()-posts0, cp.trips.Load()-trips0
	if posts != 3 || trips != 0 {
		t.Errorf("3 calls: %d through Post and %d through RoundTrip, want 3 and 0", posts, trips)
	}
	if got, all := sawKey.Load(), cp.posts.Load()+cp.trips.Load(); got != all {
		t.Errorf("the caller's header came with %d of %d posts", got, all)
	}
	keys.Store("")
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), &CallOptions{Header: http.Header{"X-Extra": {"1"}, "X-Key": {"mine"}}})
	if err != nil || string(res) != `{"ok":true}` {
		t.Fatalf("call with headers: %s, %v", res, err)
	}
	if n := cp.trips.Load() - trips0; n != 0 {
		t.Errorf("a call with headers of its own went through RoundTrip %d times, want 0", n)
	}
	if got := keys.Load(); got != "mine 1" {
		t.Errorf("a call with headers of its own came with X-Key and X-Extra %q, want \"mine 1\" (its own in place of the session's)", got)
	}
}

// Through Post, a JSON reply is read, a 404 for the session is
// ErrSessionMissing, and a redirect is followed by the client as its
// policy says.
func TestPostRepliesAndRefusals(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"json":true}}`)
	}}
	fakeURL := serveFake(t, f)
	var redirects atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			redirects.Add(1)
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
			return
		}
		r.URL, _ = url.Parse(fakeURL + r.URL.Path)
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	cp := newCountingPoster(t)
	s := connect(t, NewHTTP(front.URL+"/old", &http.Client{Transport: cp}, nil), nil)
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
	if err != nil || string(res) != `{"json":true}` {
		t.Fatalf("call: %s, %v", res, err)
	}
	if redirects.Load() == 0 || cp.posts.Load() == 0 || cp.trips.Load() == 0 {
		t.Errorf("%d redirects, %d posts, %d redirected through the client: want each", redirects.Load(), cp.posts.Load(), cp.trips.Load())
	}
	f.mu.Lock()
	f.gone = true
	f.mu.Unlock()
	_, err = s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
	if !errors.Is(err, ErrSessionMissing) {
		t.Fatalf("err %v, want ErrSessionMissing", err)
	}
}

// A refusal through Post carries the status and the start of the body.
func TestPostRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no entry here", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	cp := newCountingPoster(t)
	_, err := Connect(callCtx(t), NewHTTP(srv.URL, &http.Client{Transport: cp}, nil), &Options{Legacy: true})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusForbidden || !strings.Contains(se.Text, "no entry here") {
		t.Fatalf("err %v, want the 403 and its text", err)
	}
	if cp.posts.Load() == 0 {
		t.Error("the refused POST did not go through Post")
	}
}
