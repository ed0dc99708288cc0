//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import (
	"testing"
	"time"
)

// A parked body whose end came is read and its connection reused even
// when the connection is taken after the body's wait: the pool may take
// it last, behind busier ones. (Where a peek cannot tell whether the end
// came, such a connection is closed.)
func TestParkedBodyEndedIsReusedPastWait(t *testing.T) {
	s := mustStreamServer(t)
	tr := newTransport(t, nil)
	holdAndPark(t, tr, s, time.Nanosecond)
	s.release <- struct{}{}
	s.waitIdle(t)
	if _, got := mustPost(t, tr, s.URL+"/json", "{}"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: the parked one, whose end came, was not reused", n)
	}
}
