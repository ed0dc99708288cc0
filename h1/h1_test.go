package h1

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is an HTTP server on 127.0.0.1 that counts the connections it
// accepted.
type server struct {
	*httptest.Server
	conns atomic.Int32
}

func mustServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// newTransport is a Transport dialing with a plain dialer, and next for
// what it does not serve.
func newTransport(t *testing.T, next http.RoundTripper) *Transport {
	var d net.Dialer
	tr := &Transport{Dial: d.DialContext, Next: next}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// echo answers a POST with its body, as JSON with a length, or as an
// event stream (chunked, flushed) when the path is /sse; it echoes the
// request's X-Echo header too.
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Echo", r.Header.Get("X-Echo"))
	if r.URL.Path == "/sse" {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ")
		w.(http.Flusher).Flush()
		w.Write(b)
		io.WriteString(w, "\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func mustPost(t *testing.T, tr http.RoundTripper, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Echo", "yes")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, string(b)
}

func TestConnectionIsReused(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	for i := range 20 {
		path := "/json"
		if i%2 == 1 {
			path = "/sse"
		}
		body := `{"n":` + strings.Repeat("1", i+1) + `}`
		resp, got := mustPost(t, tr, s.URL+path, body)
		want := body
		if path == "/sse" {
			want = "data: " + body + "\n\n"
		}
		if resp.StatusCode != 200 || got != want || resp.Header.Get("X-Echo") != "yes" {
			t.Fatalf("call %d: %d %q %q, want %q", i, resp.StatusCode, got, resp.Header.Get("X-Echo"), want)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("20 requests took %d connections, want 1", n)
	}
}

func TestClosedIdleConnectionIsNotReused(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	mustPost(t, tr, s.URL, "1")
	s.CloseClientConnections()
	// The server's close reaches the client's socket asynchronously: the
	// next request must succeed either way, on a new connection once seen.
	deadline := time.Now().Add(10 * time.Second)
	for s.conns.Load() < 2 && time.Now().Before(deadline) {
		if _, got := mustPostOrRetry(t, tr, s.URL, "2"); got != "2" {
			t.Fatalf("got %q", got)
		}
	}
	if s.conns.Load() < 2 {
		t.Error("the closed connection was still used")
	}
}

// mustPostOrRetry posts; a request that met the server's close of a
// connection it thought open is tried once more.
func mustPostOrRetry(t *testing.T, tr http.RoundTripper, url, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if resp, err := tr.RoundTrip(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	return mustPost(t, tr, url, body)
}

func TestBodyClosedEarlyClosesConnection(t *testing.T) {
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 100<<10))
	})
	tr := newTransport(t, nil)
	for range 2 {
		req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Read(make([]byte, 10))
		resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 10)); err == nil {
			t.Error("read after Close succeeded")
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("2 requests whose bodies were closed early took %d connections, want 2", n)
	}
}

func TestConnectionCloseIsHonoured(t *testing.T) {
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	tr := newTransport(t, nil)
	for range 3 {
		if _, got := mustPost(t, tr, s.URL, "x"); got != "bye" {
			t.Fatalf("got %q", got)
		}
	}
	if n := s.conns.Load(); n != 3 {
		t.Errorf("3 requests answered with Connection: close took %d connections, want 3", n)
	}
}

func TestCancelEndsTheRequest(t *testing.T) {
	release := make(chan struct{})
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
	})
	defer close(release)
	tr := newTransport(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the body of a cancelled request ended cleanly")
	}
	resp.Body.Close()

	// A request whose context is already done fails with its error.
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// recorder is a RoundTripper that records the requests it gets.
type recorder struct{ got []*http.Request }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	return &http.Response{StatusCode: 204, Body: http.NoBody, Request: req}, nil
}

func TestOthersGoToNext(t *testing.T) {
	next := &recorder{}
	tr := newTransport(t, next)
	unknownLength, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", io.MultiReader(strings.NewReader("x")))
	unknownLength.ContentLength = -1
	expect, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", strings.NewReader("x"))
	expect.Header.Set("Expect", "100-continue")
	tls, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:1/", nil)
	for _, req := range []*http.Request{tls, unknownLength, expect} {
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if len(next.got) != 3 {
		t.Errorf("Next got %d requests, want 3", len(next.got))
	}
}

func TestHeaderThatBreaksFramingIsRefused(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("x"))
	req.Header["X-Bad"] = []string{"a\r\nX-Injected: 1"}
	if _, err := tr.RoundTrip(req); !errors.Is(err, errHeader) {
		t.Errorf("got %v, want errHeader", err)
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("a refused request reached the server (%d connections)", n)
	}
}

// TestClient: the client Client returns sends plain-HTTP requests over h1
// with the dial function given, and keeps the redirect policy of the
// client it copies.
func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	refused := errors.New("no redirects")
	c := Client(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return refused }}, dial)
	if _, ok := c.Transport.(*Transport); !ok {
		t.Fatalf("Client's transport is %T, want *h1.Transport", c.Transport)
	}
	for range 3 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("3 requests dialed %d times through the dial function, want 1 (kept alive)", n)
	}
	if _, err := c.Get(srv.URL + "/away"); !errors.Is(err, refused) {
		t.Errorf("a redirect answered %v, want the copied client's refusal", err)
	}
}

// TestCheckHeaderAgreesWithNetHTTP: h1 refuses a header exactly when
// net/http's transport does, so that a tool whose header template makes a
// bad value fails the same way over either.
func TestCheckHeaderAgreesWithNetHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	std := &http.Transport{}
	defer std.CloseIdleConnections()
	cases := []struct{ name, value string }{
		{"X-Ok", "plain value\twith a tab"}, {"X-Ok", "é and ünïcode"}, {"X-Ok", ""},
		{"X-Nul", "a\x00b"}, {"X-Bell", "a\x07"}, {"X-Del", "a\x7f"}, {"X-Lf", "a\nb"},
		{"Bad Name", "v"}, {"Bad:Name", "v"}, {"Bad(Name)", "v"}, {"Bad\"", "v"}, {"Bäd", "v"}, {"", "v"},
		{"X-Tilde~!#$%&'*+-.^_`|", "v"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header = http.Header{c.name: {c.value}}
		resp, stdErr := std.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		if h1Err := checkHeader(req.Header); (h1Err == nil) != (stdErr == nil) {
			t.Errorf("header %q: %q: h1 says %v, net/http says %v", c.name, c.value, h1Err, stdErr)
		}
	}
}
