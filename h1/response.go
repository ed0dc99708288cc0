package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// response is the http.ResponseWriter of a request the server serves. Its
// head is rendered when the status is set (so that later changes to the
// header are not sent, as with net/http) and written with the first bytes
// of the body that go out: at the handler's return (with a Content-Length
// when the handler set none), at a Flush, or once more than a buffer of
// body is written (chunked).
type response struct {
	c      *serverConn
	req    *http.Request
	body   *requestBody
	cancel context.CancelCauseFunc
	header http.Header

	status   int
	head     []byte // the status line and the handler's fields, rendered at WriteHeader
	sniff    bool   // no Content-Type: sniff one from the body
	date     bool   // no Date: add one
	closing  bool   // Connection: close goes out
	sentHead bool
	chunked  bool
	length   int64 // the body's length, -1 while unknown
	// chunkAnyway: the handler set a Content-Length with no value; the
	// body is chunked even when it is whole at the handler's return.
	chunkAnyway bool
	written     int64  // body bytes written
	buf         []byte // body written before the head went out
	err         error  // the connection's write failure
	done        bool   // the handler returned
	hijacked    bool
	deadline    bool // the handler set a deadline
}

// Header returns the header map the response's head is made of.
func (w *response) Header() http.Header { return w.header }

// WriteHeader sets the status and renders the head. An informational
// status (1xx but 101) is written at once, the header as it is, as
// net/http does.
func (w *response) WriteHeader(code int) {
	if w.status != 0 || w.hijacked || w.done {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		b := w.renderHead(code)
		w.write(append(b, "\r\n"...))
		w.flush()
		return
	}
	w.status = code
	w.head = w.renderHead(code)
}

// renderHead renders the status line and the handler's header fields,
// cleaned as net/http cleans them (invalid names left out, line breaks in
// values made spaces, blanks around values trimmed); it reads the fields
// that decide the framing.
func (w *response) renderHead(code int) []byte {
	b := append(w.c.headBuf[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	if text := http.StatusText(code); text != "" {
		b = append(append(b, ' '), text...)
	} else {
		b = append(append(b, " status code "...), strconv.Itoa(code)...)
	}
	b = append(b, "\r\n"...)
	_, typed := w.header["Content-Type"]
	w.sniff = !typed && w.header.Get("Content-Encoding") == ""
	_, dated := w.header["Date"]
	w.date = !dated
	for k, vs := range w.header {
		if !validName(k) || !w.keep(k, vs) {
			continue
		}
		for _, v := range vs {
			b = append(append(append(b, k...), ": "...), cleanValue(v)...)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// keep reads a field that decides the framing and reports whether it goes
// out as the handler set it.
func (w *response) keep(k string, vs []string) bool {
	switch k {
	case "Content-Length":
		if len(vs) == 0 {
			// No value: no field, and no length of the server's either
			// (net/http then chunks the body).
			w.chunkAnyway = true
			return true
		}
		n, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
		if err != nil || n < 0 || len(vs) > 1 {
			w.c.s.logf("http: invalid Content-Length of %q", vs)
			return false
		}
		w.length = n
	case "Transfer-Encoding":
		return false // the server frames the body itself
	case "Connection":
		for _, v := range vs {
			if hasToken(v, "close") {
				w.closing = true
			}
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token t.
func hasToken(v, t string) bool {
	for part := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(strings.TrimSpace(part), t) {
			return true
		}
	}
	return false
}

// cleanValue makes each CR and LF a space and trims the blanks around v.
func cleanValue(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		v = strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, v)
	}
	return strings.TrimSpace(v)
}

// Write writes body bytes: into the buffer while the head has not gone
// out and they fit, to the connection after it.
func (w *response) Write(p []byte) (int, error) {
	switch {
	case w.hijacked:
		return 0, http.ErrHijacked
	case w.done:
		return 0, errAfterHandler
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.length >= 0 && w.written+int64(len(p)) > w.length {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if !w.sentHead && len(w.buf)+len(p) <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.sendHead(false, p)
	w.writeBody(w.buf, p)
	w.buf = w.buf[:0]
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// errAfterHandler is what a write after the handler returned gets.
var errAfterHandler = errors.New("h1: write after the handler returned")

// WriteString writes s.
func (w *response) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// sendHead writes the head with the fields the server adds: a sniffed
// Content-Type, Date, the framing, Connection: close. final means the
// handler returned, and the buffered body is all of it; next is the body
// written next, sniffed when nothing is buffered.
func (w *response) sendHead(final bool, next []byte) {
	if w.sentHead {
		return
	}
	w.sentHead = true
	b := w.head
	sample := w.buf
	if len(sample) == 0 {
		sample = next
	}
	if w.sniff && len(sample) > 0 && bodyAllowed(w.status) {
		b = append(append(append(b, "Content-Type: "...), http.DetectContentType(sample)...), "\r\n"...)
	}
	if w.date {
		b = append(append(b, "Date: "...), w.c.date()...)
		b = append(b, "\r\n"...)
	}
	switch {
	case !bodyAllowed(w.status) || w.length >= 0:
	case final && !w.chunkAnyway:
		w.length = int64(len(w.buf))
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), w.length, 10), "\r\n"...)
	default:
		w.chunked = true
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if (w.req.Close || w.c.s.down.Load() || !w.body.settle()) && !w.closing {
		w.closing = true
		b = append(b, "Connection: close\r\n"...)
	}
	w.write(append(b, "\r\n"...))
	w.c.headBuf = b[:0]
}

// writeBody writes body bytes, a and then b, in one chunk when chunked.
func (w *response) writeBody(a, b []byte) {
	n := len(a) + len(b)
	if n == 0 {
		return
	}
	if w.chunked {
		var size [20]byte
		w.write(append(strconv.AppendInt(size[:0], int64(n), 16), "\r\n"...))
	}
	w.write(a)
	w.write(b)
	if w.chunked {
		w.write([]byte("\r\n"))
	}
}

// write writes to the connection's buffer; a failure cancels the
// request's context (the client is gone) and is kept.
func (w *response) write(p []byte) {
	if w.err != nil || len(p) == 0 {
		return
	}
	if _, err := w.c.bw.Write(p); err != nil {
		w.fail(err)
	}
}

// flush writes the connection's buffer out.
func (w *response) flush() {
	if w.err != nil {
		return
	}
	if err := w.c.bw.Flush(); err != nil {
		w.fail(err)
	}
}

// fail keeps a write failure and cancels the request's context.
func (w *response) fail(err error) {
	w.err = err
	w.cancel(err)
}

// Flush sends the head and the body written so far.
func (w *response) Flush() { w.FlushError() }

// FlushError sends the head and the body written so far, and returns the
// connection's write failure, if any.
func (w *response) FlushError() error {
	if w.hijacked || w.done {
		return nil
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.sendHead(false, nil)
	w.writeBody(w.buf, nil)
	w.buf = w.buf[:0]
	w.flush()
	return w.err
}

// SetWriteDeadline sets the connection's write deadline
// (http.ResponseController).
func (w *response) SetWriteDeadline(t time.Time) error {
	w.deadline = true
	return w.c.nc.SetWriteDeadline(t)
}

// SetReadDeadline sets the connection's read deadline
// (http.ResponseController).
func (w *response) SetReadDeadline(t time.Time) error {
	w.deadline = true
	return w.c.nc.SetReadDeadline(t)
}

// Hijack hands the connection to the handler, after the head and body
// written so far, if the status was set, are in the returned writer's
// buffer.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked || w.done {
		return nil, nil, http.ErrHijacked
	}
	w.c.w.disarm()
	if !w.c.readBy.IsZero() {
		w.c.setReadBy(time.Time{}) // the idle deadline is not the hijacker's
	}
	if w.status != 0 {
		w.sendHead(false, nil)
		w.writeBody(w.buf, nil)
		w.buf = w.buf[:0]
	}
	w.hijacked = true
	return w.c.nc, bufio.NewReadWriter(w.c.br, w.c.bw), nil
}

// finish ends the response after the handler returned and reports whether
// the connection may serve another request.
func (w *response) finish() bool {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.done = true
	if !w.sentHead {
		w.sendHead(true, nil)
		w.writeBody(w.buf, nil)
	}
	if w.chunked {
		w.write([]byte(chunkEnd))
	}
	w.buf = w.buf[:0]
	w.flush()
	short := w.length >= 0 && w.written < w.length && bodyAllowed(w.status)
	return w.err == nil && !w.closing && !short && !w.req.Close
}

// chunkEnd ends a chunked body without trailers.
const chunkEnd = "0\r\n\r\n"

// bodyAllowed reports whether a response of status may have a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
