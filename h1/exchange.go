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
		if final(resp.StatusCode) {
			return resp, nil
		}
	}
}

// final reports whether a response of status ends the wait for the
// answer: any but an interim 1xx, 101 included, as net/http's transport
// reads them.
func final(status int) bool {
	return status >= 200 || status == http.StatusSwitchingProtocols
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
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w := c.writeStart(req.Method, req.URL.RequestURI(), host, req.Header.Get("User-Agent") != "", req.Close)
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody || req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch {
		writeLength(w, max(req.ContentLength, 0))
	}
	writeHeader(w, req.Header)
	w.WriteString("\r\n")
	if hasBody {
		if err := copyBody(w, req.Body, req.ContentLength); err != nil {
			return err
		}
	}
	return c.writeEnd()
}

// writeStart starts a request's head on c: its request line, its Host,
// net/http's User-Agent unless the request names one (agent), and
// Connection: close when closing. It returns the writer the rest of the
// message goes to, which writeEnd sends.
func (c *conn) writeStart(method, uri, host string, agent, closing bool) *bufio.Writer {
	w := c.bw
	if holder, holds := c.lim.r.(writeHolder); holds {
		holder.startMessage()
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(uri)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if !agent {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	if closing {
		w.WriteString("Connection: close\r\n")
	}
	return w
}

// writeLength writes a Content-Length field.
func writeLength(w *bufio.Writer, n int64) {
	w.WriteString("Content-Length: ")
	w.Write(strconv.AppendInt(w.AvailableBuffer(), n, 10))
	w.WriteString("\r\n")
}

// writeEnd flushes the message writeStart began. On a connection taken
// from the pool whose writer can hold it, what is left goes out with the
// read of the answer (writeHolder).
func (c *conn) writeEnd() error {
	if holder, holds := c.lim.r.(writeHolder); holds && c.reused && c.bw.Buffered() > 0 {
		holder.holdNextWrite() // the request goes out as its answer is read
	}
	return c.bw.Flush()
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
// framing owns (the Header's keys as they are; Post's fields, in any case:
// framingField).
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
func (t *Transport) wrapBody(resp *http.Response, b *body, c *conn, stop watchTicket, closing bool) {
	reuse := !closing && !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
	empty := resp.Body == http.NoBody || resp.ContentLength == 0
	resp.Body = b.attach(t, c, stop, reuse, resp.Body, empty) // resp.Body: &b.fr when readResponse parsed the head itself
}

// attach makes b the body of a response on c that rc reads, and returns
// what the caller reads: b, or http.NoBody for an empty body, which gives
// c back (or closes it) at once. b gives c back to the pool when it is
// read to its end and reuse holds, and closes it otherwise; stop stops
// the request context's watch over c.
func (b *body) attach(t *Transport, c *conn, stop watchTicket, reuse bool, rc io.Reader, empty bool) io.ReadCloser {
	b.c, b.t, b.stop, b.reuse, b.rc = c, t, stop, reuse, rc
	if empty {
		b.finish(true)
		return http.NoBody
	}
	return b
}

// body is a response's body over a pooled connection.
type body struct {
	rc    io.Reader       // the framing's reader: fr, or net/http's body (never closed)
	fr    framing         // the framing of a head readResponse parsed itself
	ctx   context.Context // the request's, whose end closes c
	c     *conn
	t     *Transport
	stop  watchTicket
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
		if err == io.EOF {
			return n, err
		}
		if ctxErr := b.ctx.Err(); ctxErr != nil {
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
	if eof && b.stop.stop() && b.reuse {
		b.t.put(b.c)
		return
	}
	b.stop.stop()
	b.c.nc.Close()
}
