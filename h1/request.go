package h1

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// requestHead is the head of a request that Server serves itself: a POST
// over HTTP/1.1 to a path, with one Host, one Content-Length and plain
// header fields (parse). Every other request goes to net/http.
type requestHead struct {
	fieldSet
	target string // the request line's path and query
	url    *url.URL
	host   []byte
	length int64
}

// parse parses the head b, ending with its blank line, and reports whether
// the server serves it itself. What it accepts, http.ReadRequest reads the
// same way (FuzzReadRequest).
func (h *requestHead) parse(b []byte) bool {
	*h = requestHead{length: -1}
	line, rest, ok := cutLine(b)
	if !ok || !h.requestLine(line) {
		return false
	}
	return eachField(rest, h.field) && h.host != nil && h.length >= 0
}

// requestLine parses "POST TARGET HTTP/1.1", TARGET a path of visible
// ASCII characters that url.ParseRequestURI takes, as net/http does.
func (h *requestHead) requestLine(line []byte) bool {
	const method, proto = "POST ", " HTTP/1.1"
	if len(line) <= len(method)+len(proto) || !bytes.HasPrefix(line, []byte(method)) || !bytes.HasSuffix(line, []byte(proto)) {
		return false
	}
	t := line[len(method) : len(line)-len(proto)]
	if len(t) == 0 || t[0] != '/' {
		return false
	}
	for _, c := range t {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	target := string(t)
	u := plainPath(target)
	if u == nil {
		var err error
		if u, err = url.ParseRequestURI(target); err != nil {
			return false
		}
	}
	h.target, h.url = target, u
	return true
}

// plainPath returns the URL of a target that is a path of letters,
// digits, '-', '.', '_', '~' and '/' only (an MCP endpoint's), as
// url.ParseRequestURI parses it, without its parse; nil for any other
// target.
func plainPath(target string) *url.URL {
	for i := 0; i < len(target); i++ {
		if c := target[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0) {
			return nil
		}
	}
	return &url.URL{Path: target}
}

// field reads one header field; it reports false for one the server
// leaves to net/http.
func (h *requestHead) field(key string, value []byte) bool {
	switch key {
	case "Host":
		if h.host != nil || !validHost(value) {
			return false
		}
		h.host = value
		return true // net/http moves it to Request.Host
	case "Content-Length":
		if h.length >= 0 || !parseLength(value, &h.length) {
			return false
		}
	case "Connection":
		if !h.connection(value) {
			return false
		}
	case "Transfer-Encoding", "Expect", "Upgrade", "Pragma", "Trailer", "Te":
		return false
	}
	return h.add(key, value)
}

// validHost reports whether v is a host, with a port or not, of the
// characters host names and IP addresses use (a subset of what net/http
// takes).
func validHost(v []byte) bool {
	if len(v) == 0 || len(v) > 255 {
		return false
	}
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// request builds the Request of the parsed head, whose body is body (read
// only when the head's Content-Length is not 0).
func (h *requestHead) request(ctx context.Context, remote string, body io.ReadCloser) *http.Request {
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           h.url,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h.header(),
		ContentLength: h.length,
		Host:          string(h.host),
		RemoteAddr:    remote,
		RequestURI:    h.target,
		Close:         h.close,
		Body:          body,
	}
	if h.length == 0 {
		req.Body = http.NoBody
	}
	return req.WithContext(ctx)
}
