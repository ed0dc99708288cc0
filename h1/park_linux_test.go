package h1

import (
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// deadlineCounter is a TCP connection that counts the read deadlines set
// on it.
type deadlineCounter struct {
	*net.TCPConn
	n atomic.Int32
}

// SetReadDeadline counts the deadline and sets it.
func (d *deadlineCounter) SetReadDeadline(t time.Time) error {
	d.n.Add(1)
	return d.TCPConn.SetReadDeadline(t)
}

// On Linux a parked body's rest that has come is read without a deadline
// (whose timer wakes a thread of the runtime's), and the connection is
// reused.
func TestParkedRestIsReadWithoutDeadline(t *testing.T) {
	s := mustStreamServer(t)
	tr := newTransport(t, nil)
	holdAndPark(t, tr, s, time.Minute)
	s.release <- struct{}{}
	s.waitIdle(t)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.takeIdle(hostPort(u))
	if c == nil || c.rest == nil {
		t.Fatal("no parked connection in the pool")
	}
	dc := &deadlineCounter{TCPConn: c.nc.(*net.TCPConn)}
	c.nc = dc
	tr.put(c)
	if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: the parked one was not reused", n)
	}
	if n := dc.n.Load(); n != 0 {
		t.Errorf("%d read deadlines set, want none", n)
	}
}
