//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import (
	"syscall"
)

// peeker looks at an idle connection without reading from it. It is made
// once per connection, with the function raw.Read runs, so that a peek
// allocates nothing.
type peeker struct {
	raw   syscall.RawConn
	buf   [1]byte
	state peekState
	fn    func(fd uintptr) bool
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

// peek records what waits to be read.
func (p *peeker) peek(fd uintptr) bool {
	n, errno := peekFD(fd, p.buf[:])
	switch {
	case errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK:
		p.state = peekNothing
	case errno == 0 && n > 0:
		p.state = peekData
	default:
		p.state = peekClosed
	}
	return true
}

// peekNow looks at what waits to be read on c, without waiting.
func (c *conn) peekNow() peekState {
	if c.peek == nil {
		if c.peek = newPeeker(c); c.peek == nil {
			return peekUnknown
		}
	}
	p := c.peek
	p.state = peekClosed
	if err := p.raw.Read(p.fn); err != nil {
		return peekClosed
	}
	return p.state
}
