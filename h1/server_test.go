package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// frontEnd is an h1.Server and the http.Server it hands connections to,
// on one listener, serving h.
type frontEnd struct {
	url      string
	fast     *Server
	std      *http.Server
	accepted atomic.Int64 // connections accepted
	served   chan error
}

// startServer serves h on 127.0.0.1 until the test ends.
func startServer(t *testing.T, h http.Handler) *frontEnd {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := log.New(io.Discard, "", 0)
	f := &frontEnd{url: "http://" + ln.Addr().String(), served: make(chan error, 1)}
	f.fast = &Server{Handler: h, ErrorLog: quiet}
	f.std = &http.Server{Handler: h, ErrorLog: quiet}
	go f.std.Serve(f.fast.Handover())
	go func() { f.served <- f.fast.Serve(countingListener{ln, &f.accepted}) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.fast.Shutdown(ctx)
		f.std.Shutdown(ctx)
	})
	return f
}

// dial opens a raw connection to the server, closed when the test ends.
func (f *frontEnd) dial(t *testing.T) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// wantConns fails t unless the server accepted n connections.
func (f *frontEnd) wantConns(t *testing.T, n int64, what string) {
	t.Helper()
	if got := f.accepted.Load(); got != n {
		t.Errorf("%s: %d connections, want %d", what, got, n)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// servedBy is a handler that answers with which server served the request
// (h1's response writer or net/http's) and what it read.
func servedBy(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, fast := w.(*response)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "fast=%v %s %s host=%s body=%s", fast, r.Method, r.URL.RequestURI(), r.Host, body)
}

// send sends one request and returns its status and body.
func send(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = nil
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServerServesPostsAndHandsOverTheRest: POSTs are served by h1 on one
// kept-alive connection; a GET hands the connection to net/http, which
// serves it and every later request on it.
func TestServerServesPostsAndHandsOverTheRest(t *testing.T) {
	f := startServer(t, http.HandlerFunc(servedBy))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := range 3 {
		_, got := send(t, c, http.MethodPost, f.url+"/a/mcp?i="+fmt.Sprint(i), "hello")
		want := fmt.Sprintf("fast=true POST /a/mcp?i=%d host=%s body=hello", i, strings.TrimPrefix(f.url, "http://"))
		if got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if _, got := send(t, c, http.MethodGet, f.url+"/x", ""); !strings.HasPrefix(got, "fast=false GET /x") {
		t.Errorf("GET: %q", got)
	}
	if _, got := send(t, c, http.MethodPost, f.url+"/y", "z"); !strings.HasPrefix(got, "fast=false POST /y") {
		t.Errorf("POST after the hand-over: %q", got)
	}
	f.wantConns(t, 1, "kept alive")
}

// TestServerResponsesAsNetHTTP runs handlers on both servers and compares
// what a client reads: status, header (but Date) and body.
func TestServerResponsesAsNetHTTP(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	handlers := map[string]http.HandlerFunc{
		"empty":   func(w http.ResponseWriter, r *http.Request) {},
		"sniffed": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>hi</html>") },
		"json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
		},
		"status": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) },
		"nocontent": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
			io.WriteString(w, "dropped")
		},
		"long": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, long) },
		"length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "12345")
		},
		"flushed": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: 2\n\n")
		},
		"late header": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			w.Header().Set("X-Late", "not sent")
			io.WriteString(w, "ok")
		},
		"newline": func(w http.ResponseWriter, r *http.Request) {
			w.Header()["X-Multi"] = []string{"a\r\nInjected: 1", " b "}
			w.Header()["Bad Name"] = []string{"x"}
		},
		"error": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusTeapot) },
		"empty length": func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Length"] = nil
			io.WriteString(w, "no length")
		},
		"close": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			fast := startServer(t, h)
			std := &http.Server{Handler: h}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go std.Serve(ln)
			t.Cleanup(func() { std.Close() })
			got := rawExchange(t, fast.url, "")
			want := rawExchange(t, "http://"+ln.Addr().String(), "")
			if got != want {
				t.Errorf("h1:\n%s\nnet/http:\n%s", got, want)
			}
		})
	}
}

// rawExchange sends a POST on a new connection and returns the response
// as read by http.ReadResponse: status, sorted header fields but Date,
// framing, body.
func rawExchange(t *testing.T, url, body string) string {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second)) // a response that never ends fails the test
	fmt.Fprintf(nc, "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for k, vs := range resp.Header {
		if k != "Date" {
			lines = append(lines, fmt.Sprintf("%s: %q", k, vs))
		}
	}
	slices.Sort(lines)
	_, date := resp.Header["Date"]
	return fmt.Sprintf("%s date=%v length=%d chunked=%v close=%v\n%s\n%q",
		resp.Status, date, resp.ContentLength, slices.Contains(resp.TransferEncoding, "chunked"), resp.Close,
		strings.Join(lines, "\n"), b)
}

// TestServerDisconnectCancels: a request still running when its client
// goes away has its context cancelled, as with net/http.
func TestServerDisconnectCancels(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan error, 1)
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		close(started)
		select {
		case <-r.Context().Done():
			cancelled <- context.Cause(r.Context())
		case <-time.After(10 * time.Second):
			cancelled <- errors.New("not cancelled")
		}
	}))
	nc := f.dial(t)
	io.WriteString(nc, "POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}")
	<-started
	nc.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("the context ended with %v, want context.Canceled", err)
	}
}

// TestServerPipelined: requests sent back to back on one connection, the
// second before the first's answer, are all answered in order, whether the
// first is fast or runs long enough to be watched.
func TestServerPipelined(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) == "slow" {
			time.Sleep(3 * watchAfter)
		}
		fmt.Fprintf(w, "%s:%s", r.URL.Path, b)
	}))
	nc := f.dial(t)
	br := bufio.NewReader(nc)
	for _, first := range []string{"fast", "slow"} {
		fmt.Fprintf(nc, "POST /1 HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n%s", first)
		if first == "slow" {
			time.Sleep(2 * watchAfter) // the second comes while the first is watched
		}
		io.WriteString(nc, "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nb")
		for _, want := range []string{"/1:" + first, "/2:b"} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if string(b) != want {
				t.Errorf("got %q, want %q", b, want)
			}
		}
	}
}

// TestServerHijack: a handler that flushed a chunked body can take the
// connection over and end the body itself (mcp's cutResponse).
func TestServerHijack(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part")
		rc := http.NewResponseController(w)
		if err := rc.Flush(); err != nil {
			t.Error(err)
		}
		conn, buf, err := rc.Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString(chunkEnd)
		buf.Flush()
	}))
	status, body := send(t, http.DefaultClient, http.MethodPost, f.url+"/h", "x")
	if status != http.StatusOK || body != "part" {
		t.Errorf("got %d %q", status, body)
	}
}

// TestServerUnreadBody: a body the handler leaves unread is dropped when
// short, and the connection kept; a long one closes the connection.
func TestServerUnreadBody(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for range 2 {
		if _, got := send(t, c, http.MethodPost, f.url, strings.Repeat("s", 1000)); got != "ok" {
			t.Fatalf("got %q", got)
		}
	}
	f.wantConns(t, 1, "short bodies")
	if _, got := send(t, c, http.MethodPost, f.url, strings.Repeat("l", maxDiscard+1)); got != "ok" {
		t.Fatalf("got %q", got)
	}
	if _, got := send(t, c, http.MethodPost, f.url, "x"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	f.wantConns(t, 2, "after a long unread body")
}

// TestServerPanic: a handler's panic closes the connection without an
// answer, and the server goes on serving.
func TestServerPanic(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		io.WriteString(w, "ok")
	}))
	if _, err := http.Post(f.url+"/panic", "text/plain", strings.NewReader("x")); err == nil {
		t.Error("a panicking handler's request got an answer")
	}
	if _, got := send(t, http.DefaultClient, http.MethodPost, f.url+"/fine", "x"); got != "ok" {
		t.Errorf("got %q", got)
	}
}

// TestServerShutdown: Shutdown closes idle connections, lets a request
// being served finish, and Serve returns http.ErrServerClosed.
func TestServerShutdown(t *testing.T) {
	release := make(chan struct{})
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "done")
	}))
	idle := f.dial(t)
	answer := make(chan string, 1)
	go func() {
		_, body := send(t, http.DefaultClient, http.MethodPost, f.url+"/slow", "x")
		answer <- body
	}()
	for f.active() == 0 {
		time.Sleep(time.Millisecond)
	}
	shut := make(chan error, 1)
	go func() { shut <- f.fast.Shutdown(context.Background()) }()
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the idle connection: %v, want it closed", err)
	}
	close(release)
	if got := <-answer; got != "done" {
		t.Errorf("the request being served got %q", got)
	}
	if err := <-shut; err != nil {
		t.Error(err)
	}
	if err := <-f.served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve returned %v", err)
	}
}

// active counts the connections serving a request.
func (f *frontEnd) active() int {
	f.fast.mu.Lock()
	defer f.fast.mu.Unlock()
	n := 0
	for _, a := range f.fast.conns {
		if a {
			n++
		}
	}
	return n
}

// TestServerSlowHead: a head that comes in pieces is read whole and
// served; one longer than the buffer goes to net/http.
func TestServerSlowHead(t *testing.T) {
	f := startServer(t, http.HandlerFunc(servedBy))
	for _, pad := range []int{10, serverBufSize} {
		nc := f.dial(t)
		head := fmt.Sprintf("POST /s HTTP/1.1\r\nHost: h\r\nX-Pad: %s\r\nContent-Length: 1\r\n\r\nb", strings.Repeat("p", pad))
		for part := range slices.Chunk([]byte(head), 7) {
			nc.Write(part)
			time.Sleep(100 * time.Microsecond)
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		nc.Close()
		want := fmt.Sprintf("fast=%v POST /s host=h body=b", pad < serverBufSize)
		if string(b) != want {
			t.Errorf("pad %d: got %q, want %q", pad, b, want)
		}
	}
}

// TestServerLongUnreadBodyCloses: a response to a request whose long body
// the handler left unread says Connection: close, and the connection
// closes after it, as net/http does.
func TestServerLongUnreadBodyCloses(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	nc := f.dial(t)
	fmt.Fprintf(nc, "POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", 10*maxDiscard, strings.Repeat("b", 1000))
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("status %d, close %v; want 413 and Connection: close", resp.StatusCode, resp.Close)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the response: %v, want the connection closed", err)
	}
}

// TestServerWatchedRequestKeepsConnection: a request that runs long
// enough to be watched ends its watch's read when it returns, and the
// connection serves the next request.
func TestServerWatchedRequestKeepsConnection(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		time.Sleep(3 * watchAfter)
		if err := r.Context().Err(); err != nil {
			t.Errorf("the request's context ended while its client waited: %v", err)
		}
		io.WriteString(w, "ok")
	}))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for range 3 {
		if _, got := send(t, c, http.MethodPost, f.url, "x"); got != "ok" {
			t.Fatalf("got %q", got)
		}
	}
	f.wantConns(t, 1, "a watched request")
}

// TestServerLargeBody: a body many times the buffer, sent in pieces, is
// read whole, and the connection then serves the next request.
func TestServerLargeBody(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %v", len(b), strings.Count(string(b), "0123456789") == len(b)/10)
	}))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	big := strings.Repeat("0123456789", 500_000)
	pr, pw := io.Pipe()
	go func() {
		for part := range slices.Chunk([]byte(big), 64<<10) {
			pw.Write(part)
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/upload", pr)
	req.ContentLength = int64(len(big))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%d true", len(big)); string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, got := send(t, c, http.MethodPost, f.url, "0123456789"); got != "10 true" {
		t.Errorf("the next request: %q", got)
	}
	if n, s := f.accepted.Load(), f.fast.Served(); n != 1 || s != 2 {
		t.Errorf("%d connections and %d requests served by h1, want 1 and 2", n, s)
	}
}

// TestServerIdleTimeout: a connection that stays idle past the idle
// timeout is closed; one whose requests come sooner is kept.
func TestServerIdleTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(servedBy), IdleTimeout: 400 * time.Millisecond}
	go s.Serve(ln)
	defer s.Shutdown(context.Background())
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for range 4 {
		io.WriteString(nc, "POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("a request within the idle timeout: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		time.Sleep(150 * time.Millisecond)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("an idle connection: %v, want it closed by the server", err)
	}
}

// TestServerWatchLoopLingers: requests that come a few watchAfter apart
// find the disconnect watch's loop still running, rather than starting
// it each (a goroutine made runnable on the request's path), and the
// loop ends at Shutdown.
func TestServerWatchLoopLingers(t *testing.T) {
	f := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		io.WriteString(w, "ok")
	}))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	const requests = 6
	for range requests {
		if _, got := send(t, c, http.MethodPost, f.url, "x"); got != "ok" {
			t.Fatalf("got %q", got)
		}
		time.Sleep(3 * watchAfter) // looks find no request meanwhile
	}
	if starts := f.fast.watchCounts(t).starts; starts > 2 {
		t.Errorf("the watch loop started %d times for %d requests %v apart; want it kept running", starts, requests, 3*watchAfter)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.fast.Shutdown(ctx)
	deadline := time.Now().Add(watchLinger / 2)
	for {
		n := f.fast.watchCounts(t)
		if n.ends == n.starts {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch loop still runs after Shutdown (%d starts, %d ends)", n.starts, n.ends)
		}
		time.Sleep(watchAfter)
	}
}

// watchCounts is how often a server's watch loop started and ended.
type watchCounts struct{ starts, ends int }

// watchCounts returns s's counts.
func (s *Server) watchCounts(t *testing.T) watchCounts {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return watchCounts{s.watchStarts, s.watchEnds}
}
