package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
)

// readResponse reads the head of a response from br as http.ReadResponse
// does. The head of a common response (HTTP/1.1; a status that has a body;
// a Content-Length or chunked framing; at most maxFields fields, none of
// them folded, Trailer or Pragma), whole in br's buffer after one read,
// is parsed where it lies, its body read through f (resp.Body is then f,
// or http.NoBody for a length of 0); anything else goes to
// http.ReadResponse, which reads it from its start: nothing is consumed
// before the head is known to be common.
func readResponse(br *bufio.Reader, req *http.Request, f *framing) (*http.Response, error) {
	var h head
	resp, err := readHead(br, req, &h, f)
	if resp != nil || err != nil {
		return resp, err
	}
	return h.response(req, f), nil
}

// readHead reads a response's head from br: a common one (readResponse)
// parsed where it lies into h, with f set to read its body, and a nil
// Response; any other by http.ReadResponse, whose Response it returns.
// h's field values lie in br's buffer: they must be copied before the
// body is read.
func readHead(br *bufio.Reader, req *http.Request, h *head, f *framing) (*http.Response, error) {
	if _, err := br.Peek(1); err != nil {
		// What http.ReadResponse returns when the status line's read fails.
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	buf, _ := br.Peek(br.Buffered())
	if n := headEnd(buf); n > 0 && (req == nil || req.Method != http.MethodHead) && h.parse(buf[:n]) {
		br.Discard(n)
		*f = framing{br: br, n: h.length}
		if h.chunked {
			f.startChunks()
		}
		return nil, nil
	}
	return http.ReadResponse(br, req)
}

// headEnd returns the length of the head at the start of buf, up to and
// with the blank line that ends it (a line feed followed by one, or by a
// carriage return and one, as net/textproto reads lines), or -1 when buf
// holds no such end.
func headEnd(buf []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(buf) && buf[i] == '\n':
			return i + 1
		case i+1 < len(buf) && buf[i] == '\r' && buf[i+1] == '\n':
			return i + 2
		}
	}
}

// maxFields bounds the fields of a head that readResponse parses itself;
// a head with more goes to http.ReadResponse.
const maxFields = 32

// head is a response head parsed where it lies in the reader's buffer.
type head struct {
	fieldSet
	status     []byte // after the protocol: the code and the reason
	code       int
	length     int64 // Content-Length, -1 when chunked
	lengthSeen bool
	chunked    bool
}

// parse parses the head b, ending with its blank line, and reports
// whether it is a common one (readResponse).
func (h *head) parse(b []byte) bool {
	line, rest, ok := cutLine(b)
	if !ok || !h.statusLine(line) {
		return false
	}
	h.length = -1
	// One framing exactly: none means a body up to the connection's close.
	return eachField(rest, h.field) && h.lengthSeen != h.chunked
}

// field reads one header field; it reports false for a head that is not
// a common one.
func (h *head) field(key string, value []byte) bool {
	switch key {
	case "Content-Length":
		if h.lengthSeen || !parseLength(value, &h.length) {
			return false
		}
		h.lengthSeen = true
	case "Transfer-Encoding":
		if h.chunked || !strings.EqualFold(string(value), "chunked") {
			return false
		}
		h.chunked = true
		return true // net/http keeps it out of the Header
	case "Connection":
		if !h.connection(value) {
			return false
		}
		if h.close {
			return true // net/http deletes a Connection: close
		}
	case "Trailer", "Pragma":
		return false
	}
	return h.add(key, value)
}

// statusLine parses "HTTP/1.1 CODE[ REASON]" with a code whose response
// has a body (not 1xx, 204 or 304).
func (h *head) statusLine(line []byte) bool {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(line, []byte(proto)) || bytes.IndexByte(line, '\r') >= 0 {
		return false
	}
	s := line[len(proto):]
	if len(s) < 3 || len(s) > 3 && s[3] != ' ' {
		return false
	}
	code := 0
	for _, c := range s[:3] {
		if c < '0' || c > '9' {
			return false
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		return false
	}
	h.status, h.code = s, code
	return true
}

// cutLine cuts the line ending in CRLF at the start of b.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	return b[:i-1], b[i+1:], true
}

// parseLength parses a Content-Length of decimal digits (at most 18, so
// that it fits an int64).
func parseLength(v []byte, n *int64) bool {
	if len(v) == 0 || len(v) > 18 {
		return false
	}
	var x int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		x = x*10 + int64(c-'0')
	}
	*n = x
	return true
}

// response builds the response of the parsed head, whose body f reads
// (readHead set it), and makes it the response its trailer goes to.
func (h *head) response(req *http.Request, f *framing) *http.Response {
	resp := &http.Response{
		Status:        status(h.status),
		StatusCode:    h.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h.header(),
		ContentLength: h.length,
		Close:         h.close,
		Request:       req,
	}
	f.resp = resp
	if h.chunked {
		resp.TransferEncoding = []string{"chunked"}
	}
	resp.Body = f
	if h.length == 0 {
		resp.Body = http.NoBody
	}
	return resp
}

// status returns the status line's code and reason as a string, without
// a copy for the common ones.
func status(b []byte) string {
	switch string(b) {
	case "200 OK":
		return "200 OK"
	case "202 Accepted":
		return "202 Accepted"
	}
	return string(b)
}
