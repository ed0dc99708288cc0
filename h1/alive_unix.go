//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import (
	"syscall"
)

// peeker looks at an idle connection without reading from it. It is made
// once per connection, with the function raw.Read runs, so that a peek
// allocates nothing.
type peeker struct {
	raw  syscall.RawConn
	buf  [1]byte
	open bool
	fn   func(fd uintptr) bool
}

// newPeeker returns the peeker of c's connection, nil when it has no
// file descriptor to peek at.
func newPeeker(c *conn) *peeker {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &peeker{raw: raw}
	p.fn = p.peek
	return p
}

// peek records whether nothing waits to be read (EAGAIN).
func (p *peeker) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	return true
}

// alive reports whether an idle connection is still open: a peek that
// does not wait finds nothing to read (EAGAIN). The server's close (end
// of file) or anything it sent unasked means the connection is done.
func (c *conn) alive() bool {
	if c.peek == nil {
		if c.peek = newPeeker(c); c.peek == nil {
			return true
		}
	}
	p := c.peek
	p.open = false
	err := p.raw.Read(p.fn)
	return err == nil && p.open
}
