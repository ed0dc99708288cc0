package h1

import (
	"errors"
	"io"
	"time"
)

// requestBody is the body of a request the server serves, read from the
// connection's buffer.
type requestBody struct {
	c       *serverConn
	n       int64 // bytes left
	closed  bool
	err     error // a read's failure
	tooLong bool  // left unread, too long to drop
}

// errRequestBodyClosed is what a read of a closed body gets, or of the
// body of a request whose handler returned.
var errRequestBodyClosed = errors.New("http: invalid Read on closed Body")

// Read reads the body; the read that takes its last byte returns io.EOF
// with it, and arms the disconnect watch.
func (b *requestBody) Read(p []byte) (int, error) {
	switch {
	case b.closed:
		return 0, errRequestBodyClosed
	case b.err != nil:
		return 0, b.err
	case b.n <= 0:
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	k, err := b.c.br.Read(p)
	b.n -= int64(k)
	switch {
	case b.n == 0:
		b.c.w.arm()
		return k, io.EOF
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = err
	}
	return k, err
}

// Close closes the body; what is left of it is read and dropped before
// the response's head goes out (settle). The server closes it too when
// the handler returns.
func (b *requestBody) Close() error {
	b.closed = true
	return nil
}

// settle reads and drops what is left of the body before the response's
// head goes out, as net/http does, and reports whether the connection can
// serve another request: not when the rest is longer than maxDiscard or a
// read of the body failed (the head then says Connection: close).
func (b *requestBody) settle() bool {
	if b.err != nil {
		return false
	}
	if b.n == 0 {
		return true
	}
	if b.n >= maxDiscard {
		b.tooLong = true
		return false
	}
	if _, err := b.c.br.Discard(int(b.n)); err != nil {
		b.err = err
		return false
	}
	b.n = 0
	return true
}

// closeConn closes the connection after a response whose request's body
// was left unread: the write side first, then, after rstAvoidance, the
// whole, so that the client reads the response before the reset that
// closing on unread bytes sends (as net/http).
func (b *requestBody) closeConn() {
	if !b.tooLong {
		return
	}
	if tc, ok := b.c.nc.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
		time.Sleep(rstAvoidance)
	}
}
