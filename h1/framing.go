package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
)

// framing reads the body of a response whose head readResponse parsed
// itself, as net/http's body reader does: a length's bytes, ending with
// the last of them; or chunks, with net/http's own chunked reader, and
// the trailer after them.
type framing struct {
	br     *bufio.Reader
	n      int64          // bytes left of a length; -1 for chunks
	chunks io.Reader      // net/http's chunked reader, for chunks
	resp   *http.Response // whose Trailer a trailer goes to; nil for Post's
	err    error          // the end, or the error, once met
}

// startChunks makes f read chunks.
func (f *framing) startChunks() {
	f.chunks = httputil.NewChunkedReader(f.br)
}

// Read reads the body. Its end is io.EOF, returned with the last bytes
// when they are the last of the length or the last chunk's end is
// already buffered.
func (f *framing) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	var n int
	if f.chunks != nil {
		n, f.err = f.readChunks(p)
	} else {
		n, f.err = f.readLength(p)
	}
	return n, f.err
}

// Close does nothing: the connection's fate is the body's that wraps f
// (body), which never closes it.
func (f *framing) Close() error { return nil }

// readLength reads from a body of f.n bytes left.
func (f *framing) readLength(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	n, err := f.br.Read(p)
	f.n -= int64(n)
	switch {
	case err == io.EOF:
		return n, io.ErrUnexpectedEOF
	case err == nil && f.n == 0:
		return n, io.EOF
	}
	return n, err
}

// readChunks reads chunks, and the trailer after the last.
func (f *framing) readChunks(p []byte) (int, error) {
	n, err := f.chunks.Read(p)
	if err == io.EOF {
		if terr := f.readTrailer(); terr != nil {
			return n, terr
		}
	}
	return n, err
}

// Errors of a trailer, net/http's words.
var (
	errTrailerEOF  = errors.New("http: unexpected EOF reading trailer")
	errLongTrailer = errors.New("http: suspiciously long trailer after chunked body")
)

// readTrailer reads the trailer after the last chunk into the response's
// Trailer, as net/http does: most often only its blank line.
func (f *framing) readTrailer() error {
	buf, err := f.br.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		f.br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !doubleCRLFAhead(f.br) {
		return errLongTrailer
	}
	hdr, err := textproto.NewReader(f.br).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	if f.resp == nil {
		return nil // a reply to Post, which keeps no trailer
	}
	if f.resp.Trailer == nil {
		f.resp.Trailer = http.Header(hdr)
		return nil
	}
	for k, v := range hdr {
		f.resp.Trailer[k] = v
	}
	return nil
}

// doubleCRLFAhead reports whether a blank line comes within the reader's
// buffer, which bounds a trailer's size as net/http does.
func doubleCRLFAhead(br *bufio.Reader) bool {
	for n := 4; ; n++ {
		buf, err := br.Peek(n)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
