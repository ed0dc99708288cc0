package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dropper is an HTTP/1.1 server that answers the first request of each
// connection (keep-alive) and closes the connection when a second one
// comes, without answering: what a server whose idle timeout ends as the
// request goes out looks like to the client. It records each request's
// connection number, method and body.
type dropper struct {
	url  string
	mu   sync.Mutex
	seen []string // "conn method body"
	n    int
}

// newDropper starts a dropper for the test.
func newDropper(t *testing.T) *dropper {
	t.Helper()
	d := &dropper{}
	d.url = listen(t, func(nc net.Conn) {
		d.mu.Lock()
		d.n++
		n := d.n
		d.mu.Unlock()
		d.conn(nc, n)
	}) + "/"
	return d
}

// conn serves connection number n (1, 2, …).
func (d *dropper) conn(nc net.Conn, n int) {
	eachRequest(nc, func(i int, req *http.Request) bool {
		b, _ := io.ReadAll(req.Body)
		d.mu.Lock()
		d.seen = append(d.seen, strings.Join([]string{string(rune('0' + n)), req.Method, string(b)}, " "))
		d.mu.Unlock()
		if i > 0 {
			return false // the second request on a connection: close, no answer
		}
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
}

// eachRequest hands the requests read from nc to serve, with their
// number on the connection (0, 1, …), until the client closes it or
// serve reports false; then it closes nc.
func eachRequest(nc net.Conn, serve func(i int, req *http.Request) bool) {
	defer nc.Close()
	br := bufio.NewReader(nc)
	for i := 0; ; i++ {
		req, err := http.ReadRequest(br)
		if err != nil || !serve(i, req) {
			return
		}
	}
}

// requests returns what the server saw, in order.
func (d *dropper) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.seen...)
}

// do sends one request over tr and returns its body or its error.
func do(tr http.RoundTripper, method, url, body string, header http.Header) (string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestLostConnectionRetry: a request that a kept-alive connection lost
// before any answer is sent again on a new connection when it may be sent
// twice (a GET, or a POST with an Idempotency-Key and a body that can be
// made again), as net/http does, and fails otherwise, reaching the server
// once.
func TestLostConnectionRetry(t *testing.T) {
	for _, c := range []struct {
		name, method, body string
		header             http.Header
		retried            bool
	}{
		{"GET", http.MethodGet, "", nil, true},
		{"POST with an idempotency key", http.MethodPost, `{"a":1}`, http.Header{"Idempotency-Key": {"k1"}}, true},
		{"POST", http.MethodPost, `{"a":1}`, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDropper(t)
			tr := newTransport(t, nil)
			url := d.url
			if got, err := do(tr, c.method, url, c.body, c.header); err != nil || got != "ok" {
				t.Fatalf("first request: %q, %v", got, err)
			}
			got, err := do(tr, c.method, url, c.body, c.header)
			want := []string{"1 " + c.method + " " + c.body, "1 " + c.method + " " + c.body}
			if c.retried {
				if err != nil || got != "ok" {
					t.Fatalf("second request: %q, %v; want it sent again and answered", got, err)
				}
				want = append(want, "2 "+c.method+" "+c.body)
			} else if err == nil {
				t.Fatalf("second request answered %q; want the lost connection's error", got)
			}
			if seen := d.requests(); strings.Join(seen, "|") != strings.Join(want, "|") {
				t.Errorf("the server saw %q, want %q", seen, want)
			}
		})
	}
}

// listen serves each connection to a listener on 127.0.0.1 with serve,
// on a goroutine of its own, until the test ends, and returns the base
// URL.
func listen(t *testing.T, serve func(nc net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(nc)
		}
	}()
	return "http://" + ln.Addr().String()
}

// oneRequest serves a connection that handle answers after its first
// request was read, writing bytes as they are, and then closes it.
func oneRequest(handle func(nc net.Conn, req *http.Request)) func(net.Conn) {
	return func(nc net.Conn) {
		defer nc.Close()
		if req, err := http.ReadRequest(bufio.NewReader(nc)); err == nil {
			handle(nc, req)
		}
	}
}

// TestNewConnectionNotRetried: a request whose new connection fails is
// not sent again; only a kept-alive connection may have been closed by
// the server's idle timeout.
func TestNewConnectionNotRetried(t *testing.T) {
	var requests atomic.Int64
	base := listen(t, oneRequest(func(net.Conn, *http.Request) { requests.Add(1) })) // no answer
	tr := newTransport(t, nil)
	if _, err := do(tr, http.MethodGet, base+"/", "", nil); err == nil {
		t.Fatal("a request whose connection closed unanswered succeeded")
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the server got %d requests, want 1 (no retry)", n)
	}
}

// TestEndlessHeadIsRefused: a response whose head goes on past 1 MiB
// fails its request (net/http's transport bounds it too) instead of
// growing the gateway's memory; a head of 200 KB, over the buffer's size,
// is read whole.
func TestEndlessHeadIsRefused(t *testing.T) {
	base := listen(t, oneRequest(func(nc net.Conn, req *http.Request) {
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nX-Big: ")
		if req.URL.Path != "/endless" {
			io.WriteString(nc, strings.Repeat("b", 200<<10)+"\r\nContent-Length: 2\r\n\r\nok")
			return
		}
		chunk := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB, or until the client hangs up
			if _, err := io.WriteString(nc, chunk); err != nil {
				return
			}
		}
	}))
	tr := newTransport(t, nil)
	if _, err := do(tr, http.MethodGet, base+"/endless", "", nil); !errors.Is(err, errHeadTooLarge) {
		t.Errorf("an endless head answered %v, want errHeadTooLarge", err)
	}
	if got, err := do(tr, http.MethodGet, base+"/big", "", nil); err != nil || got != "ok" {
		t.Errorf("a 200 KB head answered %q, %v; want ok", got, err)
	}
}

// TestBodyReadEndsWithTheContext: a body read that the request's context
// cut short (its end closes the connection) fails with the context's
// error, as net/http's does, so that a caller can tell a timeout.
func TestBodyReadEndsWithTheContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	base := listen(t, oneRequest(func(nc net.Conn, _ *http.Request) {
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
		<-release // the rest never comes
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	resp, err := newTransport(t, nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the body's read ended with %v, want context.DeadlineExceeded", err)
	}
}
