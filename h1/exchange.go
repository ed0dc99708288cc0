package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
)

// exchange writes req on c and reads the head of its response (1xx
// interim responses skipped), whose body f reads when readResponse parsed
// the head itself. It closes req's body.
func (c *conn) exchange(req *http.Request, f *framing) (*http.Response, error) {
	err := c.write(req)
	closeBody(req)
	if err != nil {
		return nil, err
	}
	c.lim.n = maxHeadBytes
	defer func() { c.lim.n = unlimited }()
	for {
		resp, err := readResponse(c.br, req, f)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// maxHeadBytes bounds what the connection may read while a response's
// head is read (interim 1xx heads included, and what of the body comes
// in the same reads): a server that sends an endless head fails its
// request instead of filling the gateway's memory. net/http's server
// takes 1 MiB of a request's head by default.
const maxHeadBytes = 1 << 20

// unlimited is a headLimit's n while no head is read.
const unlimited = math.MaxInt64

// errHeadTooLarge is the error of a response whose head is over
// maxHeadBytes.
var errHeadTooLarge = errors.New("h1: the response's head is over 1 MiB")

// headLimit is the reader under a connection's buffer: while n is not
// unlimited, at most n more bytes are read.
type headLimit struct {
	r io.Reader
	n int64
}

// Read reads from r, at most n bytes.
func (l *headLimit) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// write writes req's head and body, and flushes them.
func (c *conn) write(req *http.Request) error {
	w := c.bw
	holder, holds := c.lim.r.(writeHolder)
	if holds {
		holder.startMessage()
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	if req.Host != "" {
		w.WriteString(req.Host)
	} else {
		w.WriteString(req.URL.Host)
	}
	w.WriteString("\r\n")
	if req.Header.Get("User-Agent") == "" {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody || req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch {
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(w.AvailableBuffer(), max(req.ContentLength, 0), 10))
		w.WriteString("\r\n")
	}
	writeHeader(w, req.Header)
	w.WriteString("\r\n")
	if hasBody {
		if err := copyBody(w, req.Body, req.ContentLength); err != nil {
			return err
		}
	}
	if holds && c.reused && w.Buffered() > 0 {
		holder.holdNextWrite() // the request goes out as its answer is read
	}
	return w.Flush()
}

// writeHolder is a connection's writer that can keep a message's write
// for the read that follows, which writes it before it waits (connIO on
// Linux). A request is held only on a connection taken from the pool,
// whose idle peek found nothing waiting: on a new one the server may have
// written first (an error at accept), which that wait would not see.
type writeHolder interface {
	startMessage()
	holdNextWrite()
}

// copyBody copies n bytes of body into w's buffer, flushing it as it
// fills: io.CopyN would wrap body in a LimitReader for every request.
func copyBody(w *bufio.Writer, body io.Reader, n int64) error {
	for n > 0 {
		if w.Available() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		buf := w.AvailableBuffer()[:min(int64(w.Available()), n)]
		k, err := body.Read(buf)
		w.Write(buf[:k])
		n -= int64(k)
		switch {
		case err == io.EOF && n > 0:
			return io.ErrUnexpectedEOF
		case err != nil && err != io.EOF:
			return err
		}
	}
	return nil
}

// headerWriter is what writeHeader writes to.
type headerWriter interface {
	WriteString(s string) (int, error)
}

// writeHeader writes h's fields, except those the request line's
// framing owns.
func writeHeader(w headerWriter, h http.Header) {
	for k, vs := range h {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
}

// wrapBody makes resp's body b, which gives c back to the pool when it is
// read to its end, and closes c when it is closed before. stop stops the
// request context's watch over c; closing asks for the connection's end.
func (t *Transport) wrapBody(resp *http.Response, b *body, c *conn, stop func() bool, closing bool) {
	reuse := !closing && !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
	b.c, b.t, b.stop, b.reuse = c, t, stop, reuse
	b.rc = resp.Body // &b.fr when readResponse parsed the head itself
	if resp.Body == http.NoBody || resp.ContentLength == 0 {
		b.finish(true)
		resp.Body = http.NoBody
		return
	}
	resp.Body = b
}

// body is a response's body over a pooled connection.
type body struct {
	rc    io.Reader       // the framing's reader: fr, or net/http's body (never closed)
	fr    framing         // the framing of a head readResponse parsed itself
	ctx   context.Context // the request's, whose end closes c
	c     *conn
	t     *Transport
	stop  func() bool
	reuse bool

	mu   sync.Mutex
	done bool
}

// end marks the body ended and reports whether this call ended it: a body
// ends once, by whichever of its end, Close or Park comes first.
func (b *body) end() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return false
	}
	b.done = true
	return true
}

// Read reads the body; its end gives the connection back.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done {
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(err == io.EOF)
		if ctxErr := b.ctx.Err(); err != io.EOF && ctxErr != nil {
			// The context's end closed the connection under the read:
			// say so, as net/http does, rather than "use of closed
			// network connection".
			return n, ctxErr
		}
	}
	return n, err
}

// errBodyClosed is the error of a read after Close.
var errBodyClosed = errors.New("h1: read on closed response body")

// Close closes the connection unless the body was read to its end. It
// may be called while a Read waits, which it ends.
func (b *body) Close() error {
	b.finish(false)
	return nil
}

// finish gives the connection back when the body ended cleanly (eof) and
// the request's context did not close it; it closes it otherwise.
func (b *body) finish(eof bool) {
	if !b.end() {
		return
	}
	if eof && b.stop() && b.reuse {
		b.t.put(b.c)
		return
	}
	b.stop()
	b.c.nc.Close()
}
