package h1

import (
	"errors"
	"io"
	"net/url"
	"time"
)

// Park gives the response's connection back to the pool with the rest of
// the body unread, for a caller that needs no more of it but whose server
// ends the body in a later write (an event stream closed right after its
// last event): the caller does not wait for that end, and no goroutine or
// timer waits for it either. The transport reads the rest to its end,
// discarding it, when it next needs the connection and the rest has come;
// until then the connection is passed over, and once wait has passed
// without the rest it is closed.
// Park ends the request context's watch over the connection, as reading
// the body to its end does; the body must not be used after.
func (b *body) Park(wait time.Duration) {
	if !b.end() {
		return
	}
	if b.stop.stop() && b.reuse {
		b.c.rest = b.rc
		b.c.restBy = time.Now().Add(wait)
		b.t.put(b.c)
		return
	}
	b.c.nc.Close()
}

// Parks reports whether the responses to requests for u come from this
// transport itself, whose bodies can be parked (Park): plain http:// URLs
// without user information. (A request with a body of unknown length, a
// trailer or Expect goes to Next all the same.)
func (t *Transport) Parks(u *url.URL) bool {
	return u.Scheme == "http" && u.User == nil
}

// connState is whether an idle connection can carry a request.
type connState int

const (
	connReady   connState = iota
	connWaiting           // a parked body's rest has not come yet
	connDone              // closed, expired, or in an unknown state
)

// ready says whether c, taken from the pool, can carry a request now,
// reading a parked body's rest first.
func (c *conn) ready(idleTimeout time.Duration) connState {
	if time.Since(c.idleAt) >= idleTimeout {
		return connDone
	}
	if c.rest != nil {
		if st := c.finishRest(); st != connReady {
			return st
		}
	}
	if c.br.Buffered() == 0 && c.alive() {
		return connReady
	}
	return connDone
}

// restReadWait bounds how long the request that takes a connection
// waits for the rest of a parked body once some of it has come, where
// the connection cannot be read without waiting (finishRestWaiting): the
// end of a stream is a few bytes in one segment; a server still
// streaming loses the connection rather than delay the request.
const restReadWait = 2 * time.Millisecond

// errWouldBlock is the error of a read that found nothing to read on a
// connection set not to wait (noWaiter).
var errWouldBlock = errors.New("h1: nothing to read yet")

// noWaiter is a connection's reader that can be set to read only what
// has come, without waiting (connIO, on Linux).
type noWaiter interface {
	setNoWait(on bool)
}

// finishRest reads a parked body's rest to its end if it has come. A rest
// that has not come within the wait Park was given is not waited for any
// longer: the connection is closed. One that has come is read whenever
// the connection is next taken, even after that wait: a connection the
// pool took last, behind the busier ones, is as good as they are.
//
// Where the connection can be read without waiting, the rest is read
// with such reads: one that has come in part (a server still streaming,
// or an end split across writes) closes the connection, as the end of a
// stream comes in one segment. That sets no deadline, whose timer woke a
// thread of the runtime's for each such rest (the go-sdk's event streams
// end in a write of their own, after the answer: a relayed call's reply
// is often parked).
func (c *conn) finishRest() connState {
	now := time.Now()
	late := !now.Before(c.restBy)
	if nw, ok := c.lim.r.(noWaiter); ok {
		return c.finishRestNow(nw, late)
	}
	return c.finishRestWaiting(now, late)
}

// finishRestNow is finishRest with reads that do not wait: the first
// fills the buffer with what has come, if nothing is buffered yet.
func (c *conn) finishRestNow(nw noWaiter, late bool) connState {
	nw.setNoWait(true)
	defer nw.setNoWait(false)
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, errWouldBlock) && !late {
			return connWaiting
		}
		return connDone // closed, or nothing came within the wait
	}
	_, err := io.Copy(io.Discard, c.rest)
	c.rest = nil
	if err != nil {
		return connDone // not all of it came, or it failed
	}
	return connReady
}

// finishRestWaiting is finishRest where a read cannot be made not to wait
// (connio_other.go): it looks whether any of the rest has come, then reads
// it under a deadline of restReadWait from now. Where a peek cannot tell
// (peekUnknown), a connection past its wait is closed.
func (c *conn) finishRestWaiting(now time.Time, late bool) connState {
	if c.br.Buffered() == 0 {
		switch c.peekNow() {
		case peekNothing:
			if late {
				return connDone
			}
			return connWaiting
		case peekClosed:
			return connDone
		case peekUnknown: // whether the rest came is not known here
			if late {
				return connDone
			}
		}
	}
	deadline := now.Add(restReadWait)
	if !late && c.restBy.Before(deadline) {
		deadline = c.restBy
	}
	if c.nc.SetReadDeadline(deadline) != nil {
		return connDone
	}
	_, err := io.Copy(io.Discard, c.rest)
	c.rest = nil
	if err != nil || c.nc.SetReadDeadline(time.Time{}) != nil {
		return connDone
	}
	return connReady
}
