package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// tcpPair returns the two ends of a loopback TCP connection, closed when
// the test ends.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// mustConnIO returns nc's connIO.
func mustConnIO(t *testing.T, nc net.Conn) *connIO {
	t.Helper()
	c, ok := newConnIO(nc).(*connIO)
	if !ok {
		t.Fatalf("newConnIO(%T) is not a connIO", nc)
	}
	return c
}

// TestConnIOCarriesEveryByte writes far more than the sockets' small
// buffers hold through one connIO, whose writes wait for room while the
// other end's connIO reads it in small pieces, and the other way at the
// same time, on one connIO each way.
func TestConnIOCarriesEveryByte(t *testing.T) {
	a, b := tcpPair(t)
	for _, c := range []*net.TCPConn{a, b} { // small buffers: the writes must wait
		c.SetReadBuffer(16 << 10)
		c.SetWriteBuffer(16 << 10)
	}
	ca, cb := mustConnIO(t, a), mustConnIO(t, b)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	var wg sync.WaitGroup
	check := func(name string, w io.Writer, r io.Reader) {
		defer wg.Done()
		go func() {
			if n, err := w.Write(want); n != len(want) || err != nil {
				t.Errorf("%s: Write = %d, %v; want %d, nil", name, n, err, len(want))
			}
		}()
		got := make([]byte, 0, len(want))
		buf := make([]byte, 3000)
		for len(got) < len(want) {
			n, err := r.Read(buf)
			if err != nil {
				t.Errorf("%s: Read after %d bytes: %v", name, len(got), err)
				return
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the bytes read differ from those written", name)
		}
	}
	wg.Add(2)
	go check("a to b", ca, cb)
	go check("b to a", cb, ca)
	wg.Wait()
}

// TestConnIOErrorsAsNetConn checks that a connIO ends as net.Conn's Read
// and Write do: io.EOF when the peer closes, a timeout at a deadline, the
// closed-connection error after Close, ECONNRESET after a reset (which
// retry.go looks for), each but EOF a *net.OpError of the call's name.
func TestConnIOErrorsAsNetConn(t *testing.T) {
	a, b := tcpPair(t)
	ca := mustConnIO(t, a)
	buf := make([]byte, 8)

	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := ca.Read(buf)
	mustOpError(t, "deadline", err, "read")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("deadline: %v is not a timeout", err)
	}
	a.SetReadDeadline(time.Time{})

	b.Write([]byte("hi"))
	b.Close()
	if n, err := io.ReadFull(ca, buf[:2]); n != 2 || err != nil {
		t.Fatalf("ReadFull = %d, %v", n, err)
	}
	if n, err := ca.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after the peer's close: Read = %d, %v; want 0, io.EOF", n, err)
	}

	a.Close()
	_, err = ca.Read(buf)
	mustOpError(t, "closed", err, "read")
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("after Close: Read error %v, want net.ErrClosed", err)
	}
	_, err = ca.Write(buf)
	mustOpError(t, "closed", err, "write")
}

// resetConnIO returns the connIO of a connection its peer reset.
func resetConnIO(t *testing.T) *connIO {
	a, b := tcpPair(t)
	b.SetLinger(0)
	b.Close()
	a.SetReadDeadline(time.Now().Add(10 * time.Second)) // not a timing: fail rather than hang
	return mustConnIO(t, a)
}

// TestConnIOReset reads and writes a connection its peer reset.
func TestConnIOReset(t *testing.T) {
	ca := resetConnIO(t)
	_, err := ca.Read(make([]byte, 8))
	mustOpError(t, "reset", err, "read")
	if !errors.Is(err, syscall.ECONNRESET) || !lostIdle(err) {
		t.Errorf("after a reset: Read error %v, want ECONNRESET", err)
	}
	_, err = ca.Write([]byte("x"))
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after a reset: Write error %v, want EPIPE or ECONNRESET", err)
	}
}

// mustOpError fails t unless err is a *net.OpError of op.
func mustOpError(t *testing.T, what string, err error, op string) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != op {
		t.Errorf("%s: error %#v, want a *net.OpError of %q", what, err, op)
	}
}

// TestConnIOOnlyForTCPConn keeps a connection of another type on its own
// Read and Write, which may do more than move bytes.
func TestConnIOOnlyForTCPConn(t *testing.T) {
	a, _ := tcpPair(t)
	wrapped := struct{ net.Conn }{a}
	if got := newConnIO(wrapped); got != io.ReadWriter(wrapped) {
		t.Errorf("newConnIO(%T) = %T, want the connection itself", wrapped, got)
	}
}

// TestRawSyscalls runs the calls connIO makes outside a race build (which
// uses syscall.Read and syscall.Write instead) on a socket: a write, a
// read of it, and EAGAIN from a read with nothing waiting.
func TestRawSyscalls(t *testing.T) {
	a, b := tcpPair(t)
	ra, err := a.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var wn int
	var werrno syscall.Errno
	ra.Write(func(fd uintptr) bool { wn, werrno = rawWrite(fd, []byte("hello")); return true })
	if wn != 5 || werrno != 0 {
		t.Fatalf("rawWrite = %d, %v", wn, werrno)
	}
	buf := make([]byte, 16)
	var rn int
	var rerrno syscall.Errno
	rb.Read(func(fd uintptr) bool {
		rn, rerrno = rawRead(fd, buf)
		return rerrno != syscall.EAGAIN
	})
	if string(buf[:max(rn, 0)]) != "hello" || rerrno != 0 {
		t.Fatalf("rawRead = %q, %v", buf[:max(rn, 0)], rerrno)
	}
	rb.Read(func(fd uintptr) bool { rn, rerrno = rawRead(fd, buf); return true })
	if rerrno != syscall.EAGAIN {
		t.Errorf("rawRead with nothing to read = %d, %v; want EAGAIN", rn, rerrno)
	}
}

// TestConnectionsUseConnIO keeps the server's and the client's TCP
// connections on connIO.
func TestConnectionsUseConnIO(t *testing.T) {
	a, b := tcpPair(t)
	if sc := newServerConn(&Server{}, b); !isConnIO(sc.cr.r) {
		t.Errorf("the server reads a TCP connection through %T, want *connIO", sc.cr.r)
	}
	if c := newConn(a, "x:1"); !isConnIO(c.lim.r) {
		t.Errorf("the client reads a TCP connection through %T, want *connIO", c.lim.r)
	}
}

// isConnIO reports whether r is a connIO.
func isConnIO(r io.Reader) bool {
	_, ok := r.(*connIO)
	return ok
}

// A connIO set not to wait returns errWouldBlock when nothing has come,
// reads what has, and waits again once set back.
func TestConnIONoWait(t *testing.T) {
	a, b := tcpPair(t)
	c := mustConnIO(t, a)
	c.setNoWait(true)
	buf := make([]byte, 8)
	if n, err := c.Read(buf); n != 0 || !errors.Is(err, errWouldBlock) {
		t.Fatalf("read of nothing: %d, %v; want errWouldBlock", n, err)
	}
	if _, err := b.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	a.SetReadDeadline(time.Now().Add(10 * time.Second)) // not a timing: bounds a failing wait
	c.setNoWait(false)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("read %q, %v; want hi", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(buf)
		done <- err
	}()
	b.Write([]byte("x"))
	if err := <-done; err != nil {
		t.Fatalf("a waiting read: %v", err)
	}
}

// readCounter is a connection's RawConn that counts the read system
// calls its read callbacks make, on the thread of a goroutine locked to
// it, whose /proc/thread-self/io is open as io. It tells firstCalled when
// the first callback has returned.
type readCounter struct {
	syscall.RawConn
	io          int
	reads       int
	calls       int
	firstCalled chan struct{}
}

func (r *readCounter) Read(f func(fd uintptr) bool) error {
	return r.RawConn.Read(func(fd uintptr) bool {
		before := threadReads(r.io)
		ok := f(fd)
		r.reads += threadReads(r.io) - before - 1 // the first threadReads' own
		if r.calls++; r.calls == 1 {
			close(r.firstCalled)
		}
		return ok
	})
}

// threadReads returns the count of read system calls of the thread whose
// /proc/thread-self/io is open as fd, making one.
func threadReads(fd int) int {
	var buf [512]byte
	n, _ := syscall.Pread(fd, buf[:], 0)
	for _, line := range strings.Split(string(buf[:max(n, 0)]), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			c, _ := strconv.Atoi(v)
			return c
		}
	}
	return -1
}

// inQueue returns how many bytes wait to be read on the socket fd.
func inQueue(fd uintptr) int {
	var n int32
	syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	return int(n)
}

// A held write goes out from the read that follows it, which then waits
// for the answer without a read that finds nothing.
func TestConnIOHeldWrite(t *testing.T) {
	a, b := tcpPair(t)
	c := mustConnIO(t, a)
	rc := &readCounter{RawConn: c.raw, firstCalled: make(chan struct{})}
	c.raw = rc
	c.holdNextWrite()
	if n, err := c.Write([]byte("ping")); n != 4 || err != nil {
		t.Fatalf("held Write = %d, %v", n, err)
	}
	if got := inQueue(mustFD(t, b)); got != 0 {
		t.Fatalf("a held write sent %d bytes before a read", got)
	}
	a.SetReadDeadline(time.Now().Add(10 * time.Second)) // not a timing: bounds a failing wait
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd, err := syscall.Open("/proc/thread-self/io", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			done <- result{"", err}
			return
		}
		defer syscall.Close(fd)
		rc.io = fd
		buf := make([]byte, 8)
		n, err := c.Read(buf)
		done <- result{string(buf[:n]), err}
	}()
	<-rc.firstCalled // the answer comes only after the read's first callback
	buf := make([]byte, 4)
	if _, err := io.ReadFull(b, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("the peer read %q, %v; want ping", buf, err)
	}
	b.Write([]byte("pong"))
	if r := <-done; r.err != nil || r.s != "pong" {
		t.Fatalf("Read = %q, %v; want pong", r.s, r.err)
	}
	if rc.reads != 1 {
		t.Errorf("the read made %d read system calls, want 1: none that finds nothing", rc.reads)
	}
	if n, err := c.Write([]byte("again")); n != 5 || err != nil { // not held
		t.Fatalf("Write = %d, %v", n, err)
	}
	if _, err := io.ReadFull(b, buf[:4]); err != nil || string(buf) != "agai" {
		t.Errorf("the peer read %q, %v; want a write not held", buf, err)
	}
}

// mustFD returns the descriptor of nc's socket.
func mustFD(t *testing.T, nc *net.TCPConn) uintptr {
	t.Helper()
	raw, err := nc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	raw.Control(func(f uintptr) { fd = f })
	return fd
}

// A held write larger than the socket's buffer is sent in full, the rest
// once the peer makes room, before the read.
func TestConnIOHeldWriteFillsBuffer(t *testing.T) {
	a, b := tcpPair(t)
	a.SetWriteBuffer(16 << 10)
	b.SetReadBuffer(16 << 10)
	c := mustConnIO(t, a)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	c.holdNextWrite()
	c.Write(want)
	go func() {
		got := make([]byte, len(want))
		if _, err := io.ReadFull(b, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the peer read %d bytes, %v; want the held write's", len(got), err)
		}
		b.Write([]byte("ok"))
	}()
	a.SetReadDeadline(time.Now().Add(10 * time.Second)) // not a timing: bounds a failing wait
	buf := make([]byte, 8)
	if n, err := io.ReadFull(c, buf[:2]); err != nil || string(buf[:n]) != "ok" {
		t.Fatalf("Read = %q, %v; want ok", buf[:n], err)
	}
}

// A held write that fails fails its read as a write, with the error that
// tells a lost kept-alive connection (lostIdle).
func TestConnIOHeldWriteFails(t *testing.T) {
	c := resetConnIO(t)
	c.holdNextWrite()
	c.Write([]byte("ping"))
	_, err := c.Read(make([]byte, 8))
	mustOpError(t, "held write", err, "write")
	if !lostIdle(err) {
		t.Errorf("Read error %v, want EPIPE or ECONNRESET", err)
	}
}

// A request's write is held for the read of its answer on a connection
// taken from the pool, not on a new one.
func TestExchangeHoldsTheRequestsWrite(t *testing.T) {
	a, b := tcpPair(t)
	c := newConn(a, "x:1")
	newRequest := func() *http.Request {
		req, err := http.NewRequest(http.MethodPost, "http://x:1/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	if err := c.write(newRequest()); err != nil {
		t.Fatal(err)
	}
	if held := c.lim.r.(*connIO).r.first; len(held) > 0 {
		t.Fatalf("a new connection held %d bytes of its first request", len(held))
	}
	if _, err := http.ReadRequest(bufio.NewReader(b)); err != nil {
		t.Fatalf("the peer read no first request: %v", err)
	}
	c.reused = true
	req := newRequest()
	if err := c.write(req); err != nil {
		t.Fatal(err)
	}
	if got := inQueue(mustFD(t, b)); got != 0 {
		t.Fatalf("the request's write sent %d bytes before the answer's read", got)
	}
	go func() {
		head, err := http.ReadRequest(bufio.NewReader(b))
		if err != nil {
			t.Errorf("the peer read no request: %v", err)
			return
		}
		io.Copy(io.Discard, head.Body)
		b.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	}()
	a.SetReadDeadline(time.Now().Add(10 * time.Second)) // not a timing: bounds a failing wait
	var f framing
	resp, err := readResponse(c.br, req, &f)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readResponse = %v, %v", resp, err)
	}
}

// gatedBody is a request body whose last part is read only once gate is
// closed.
type gatedBody struct {
	head, tail io.Reader
	gate       <-chan struct{}
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if n, err := b.head.Read(p); err != io.EOF {
		return n, err
	}
	<-b.gate
	return b.tail.Read(p)
}

// A request that does not fit the connection's buffer is not held: its
// server may answer its first part before the rest has come, and the read
// that waited at once would miss that answer. The request goes on a
// connection taken from the pool, where one that fits would be held.
func TestEarlyAnswerToALargeRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answered := make(chan struct{})
	go serveEarlyAnswer(ln, answered)
	var d net.Dialer
	tr := &Transport{Dial: d.DialContext}
	url := "http://" + ln.Addr().String() + "/upload"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // not a timing: fail rather than hang
	defer cancel()
	first, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("small"))
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, tr, first, http.StatusOK)
	head, tail := bytes.Repeat([]byte("a"), 4*writeBufSize), []byte("end")
	body := &gatedBody{bytes.NewReader(head), bytes.NewReader(tail), answered}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(head) + len(tail))
	mustStatus(t, tr, req, http.StatusUnauthorized)
}

// serveEarlyAnswer serves one connection of ln: a 200 to its first
// request, read whole; a 401 to its second as soon as its head has come,
// then closes answered and reads the rest, keeping the connection.
func serveEarlyAnswer(ln net.Listener, answered chan<- struct{}) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	if _, err := http.ReadRequest(br); err != nil {
		return
	}
	c.Write([]byte("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"))
	close(answered)
	io.Copy(io.Discard, br)
}

// mustStatus sends req through tr and fails t unless it is answered with
// status.
func mustStatus(t *testing.T, tr *Transport, req *http.Request, status int) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d", resp.StatusCode, status)
	}
}
