package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

// TestAliveAllocatesNothing checks that the peek before each reuse of a
// connection allocates nothing once the connection made its peeker: it
// runs on every relayed call.
func TestAliveAllocatesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peek is Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			var b [1]byte
			c.Read(b[:]) // holds the connection open until the client closes
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &conn{nc: nc}
	if !c.alive() {
		t.Fatal("an open idle connection counts as closed")
	}
	if n := testing.AllocsPerRun(100, func() { c.alive() }); n != 0 {
		t.Errorf("alive allocates %v times, want 0", n)
	}
}

// TestHostPortAllocs checks that the pool's key of a URL that names its
// port is its host, without a copy; the default port is added otherwise.
func TestHostPortAllocs(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"http://127.0.0.1:8080/mcp", "127.0.0.1:8080"},
		{"http://[::1]:8080/mcp", "[::1]:8080"},
		{"http://127.0.0.1/mcp", "127.0.0.1:80"},
		{"http://[::1]/mcp", "[::1]:80"},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostPort(u); got != tt.want {
			t.Errorf("hostPort(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
	u, _ := url.Parse("http://127.0.0.1:8080/mcp")
	if n := testing.AllocsPerRun(100, func() { hostPort(u) }); n != 0 {
		t.Errorf("hostPort allocates %v times, want 0", n)
	}
}

// TestCopyBody checks that a request's body is copied whole past the
// size of the write buffer, that a body shorter than its length fails,
// and that the copy allocates nothing.
func TestCopyBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 3000) // 30,000 bytes, several write buffers
	var out bytes.Buffer
	w := bufio.NewWriterSize(&out, writeBufSize)
	if err := copyBody(w, bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if !bytes.Equal(out.Bytes(), body) {
		t.Fatalf("copied %d bytes, not the body's %d", out.Len(), len(body))
	}
	if err := copyBody(w, bytes.NewReader(body[:10]), 11); err != io.ErrUnexpectedEOF {
		t.Errorf("a short body gave %v, want %v", err, io.ErrUnexpectedEOF)
	}
	d := bufio.NewWriterSize(io.Discard, writeBufSize)
	r := bytes.NewReader(body)
	if n := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		copyBody(d, r, int64(len(body)))
	}); n != 0 {
		t.Errorf("copyBody allocates %v times, want 0", n)
	}
}

// A request whose body is larger than the write buffer arrives whole.
func TestLargeBody(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	body := strings.Repeat("x", 100<<10)
	if _, got := mustPost(t, tr, s.URL+"/json", body); got != body {
		t.Fatalf("echoed %d bytes, want %d", len(got), len(body))
	}
}

// TestRoundTripAllocs counts the allocations of one exchange over a kept
// connection with a server that allocates nothing: the request's own, the
// context's watch, the response with its header, and the body (the
// server's reply is an MCP server's event stream, whose head h1 reads).
func TestRoundTripAllocs(t *testing.T) {
	url := rawServer(t, sseReply)
	tr := newTransport(t, nil)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header["Content-Type"] = []string{"application/json"}
	exchange := func() {
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || !strings.HasPrefix(string(b), "event: message") {
			t.Fatalf("read %q, %v", b, err)
		}
	}
	exchange()
	n := testing.AllocsPerRun(100, exchange)
	t.Logf("%v allocations", n)
	if n > 14 {
		t.Errorf("an exchange allocates %v times, want at most 14", n)
	}
}

// rawServer serves every request on a connection with reply, reading
// requests with a body of Content-Length bytes, and allocates nothing
// per request. It returns its URL.
func rawServer(t *testing.T, reply string) string {
	return listen(t, func(c net.Conn) { serveRaw(c, []byte(reply)) }) + "/mcp"
}

// serveRaw answers each request on c with reply until c ends.
func serveRaw(c net.Conn, reply []byte) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		n := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if k, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n = atoi(bytes.TrimSpace(k))
			}
			if len(line) == 2 {
				break
			}
		}
		if _, err := br.Discard(n); err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// atoi reads a decimal number.
func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}
