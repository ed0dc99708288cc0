package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// streamServer answers POST /hold with an event stream whose end waits
// for a value on release, and anything else with "ok". It counts the
// connections it accepted and signals each response's end on idle.
type streamServer struct {
	*httptest.Server
	conns   atomic.Int32
	release chan struct{}
	idle    chan struct{}
}

func mustStreamServer(t *testing.T) *streamServer {
	t.Helper()
	s := &streamServer{release: make(chan struct{}, 8), idle: make(chan struct{}, 64)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/hold" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: answer\n\n")
		w.(http.Flusher).Flush()
		<-s.release
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
		case http.StateIdle:
			s.idle <- struct{}{}
		}
	}
	s.Start()
	t.Cleanup(func() { close(s.release); s.Close() })
	return s
}

// holdAndPark posts to /hold, reads the answer event, and parks the
// body with its end not yet sent.
func holdAndPark(t *testing.T, tr *Transport, s *streamServer, wait time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/hold", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReaderSize(resp.Body, 16).ReadString('\n')
	if err != nil || line != "data: answer\n" {
		t.Fatalf("got %q, %v", line, err)
	}
	p, ok := resp.Body.(interface{ Park(time.Duration) })
	if !ok {
		t.Fatal("the body cannot be parked")
	}
	p.Park(wait)
}

// waitIdle waits for the server to end a response.
func (s *streamServer) waitIdle(t *testing.T) {
	t.Helper()
	select {
	case <-s.idle:
	case <-time.After(10 * time.Second): // not a timing: the end was released
		t.Fatal("the server never ended its response")
	}
}

// A parked body whose end came is read to that end before the
// connection's next request, which reuses it.
func TestParkedBodyEndIsReadBeforeReuse(t *testing.T) {
	mustReuseEnded(t, newTransport(t, nil), time.Minute)
}

// mustReuseEnded parks a body with wait on tr, lets its end come, and
// checks that the next request reuses its connection.
func mustReuseEnded(t *testing.T, tr *Transport, wait time.Duration) {
	t.Helper()
	s := mustStreamServer(t)
	holdAndPark(t, tr, s, wait)
	s.release <- struct{}{}
	s.waitIdle(t)
	if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: the parked one, whose end came, was not reused", n)
	}
}

// A parked body whose end has not come is passed over (a new connection
// carries the next request) and kept: once its end came, it is reused.
func TestParkedBodyWithoutEndIsPassedOver(t *testing.T) {
	s := mustStreamServer(t)
	tr := newTransport(t, nil)
	holdAndPark(t, tr, s, time.Minute)
	if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	s.waitIdle(t) // the second connection's response
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	if n := tr.Idle(); n != 2 {
		t.Fatalf("%d idle connections, want 2 (the parked one kept)", n)
	}
	s.release <- struct{}{}
	s.waitIdle(t)
	for range 4 {
		if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
			t.Fatalf("got %q", got)
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if n := tr.Idle(); n != 2 {
		t.Errorf("%d idle connections, want 2 (the parked one read to its end)", n)
	}
}

// A parked body that did not end within its wait loses its connection.
func TestParkedBodyPastWaitIsClosed(t *testing.T) {
	s := mustStreamServer(t)
	tr := newTransport(t, nil)
	holdAndPark(t, tr, s, time.Nanosecond)
	if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	s.waitIdle(t) // the second connection's response
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if n := tr.Idle(); n != 1 {
		t.Errorf("%d idle connections, want 1: the parked one past its wait was kept", n)
	}
}

// Parking a body after its end was read changes nothing, and parking a
// body of a response that asked for the connection's close closes it.
func TestParkClosingResponse(t *testing.T) {
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: x\n\n")
	})
	tr := newTransport(t, nil)
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.(interface{ Park(time.Duration) }).Park(time.Minute)
	if n := tr.Idle(); n != 0 {
		t.Errorf("%d idle connections, want 0", n)
	}
}

// A parked body whose server goes on streaming instead of ending it
// loses its connection to the next request, which does not wait for the
// end: it goes on a new connection.
func TestParkedBodyStillStreamingIsClosed(t *testing.T) {
	sent := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/hold" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: answer\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: more\n\n") // after the answer, and no end
		w.(http.Flusher).Flush()
		close(sent)
		<-stop
	})
	tr := newTransport(t, nil)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/hold", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReaderSize(resp.Body, 16).ReadString('\n'); err != nil || line != "data: answer\n" {
		t.Fatalf("got %q, %v", line, err)
	}
	resp.Body.(interface{ Park(time.Duration) }).Park(time.Hour)
	<-sent
	done := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/json", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	select {
	case got := <-done:
		if got != "ok" {
			t.Fatalf("got %q", got)
		}
	case <-time.After(10 * time.Second): // not a timing: the parked body never ends
		t.Fatal("the request waited for the end of a parked body that never ends")
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if n := tr.Idle(); n != 1 {
		t.Errorf("%d idle connections, want 1: the streaming one was kept", n)
	}
}

// plainConn hides a connection's type, so that h1 reads and writes it
// through its own methods (no connIO) and cannot peek at it.
type plainConn struct{ net.Conn }

// A parked body's rest on a connection that cannot be read without
// waiting (finishRestWaiting) is read under its deadline once it came,
// and the connection is reused.
func TestParkedRestReadWaitingReuses(t *testing.T) {
	var d net.Dialer
	tr := &Transport{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return plainConn{c}, nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	mustReuseEnded(t, tr, time.Minute)
}
