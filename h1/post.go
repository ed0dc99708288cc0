package h1

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Post sends a POST of body to u, over a pooled connection as RoundTrip
// does, and reads the head of the reply, without the http.Request and
// http.Response that RoundTrip makes and its caller reads: for a client
// that sends the same header fields on every request and reads two or
// three of the reply's (an MCP client's messages, relayed on every call).
//
// fields are the request's header fields, each line "Name: value\r\n",
// which Post checks as RoundTrip checks a Header (errHeader): a name that
// is not a token, a value with a control character, or a field that the
// framing owns (Host, Content-Length, Transfer-Encoding, Connection) is
// refused. names are fields of the reply whose values Post returns, in
// their order ("" for one absent; the first of a repeated one), read
// before the body.
//
// The body must be read to its end, which gives the connection back to
// the pool, or closed, which closes it; it can be parked (Park).
// Cancelling ctx closes the connection, which ends a read or write under
// way. u must be one Parks reports true for. A request whose connection
// is lost before its answer is sent again when it may be sent twice, as
// RoundTrip decides: here, when fields hold an idempotency key.
func (t *Transport) Post(ctx context.Context, u *url.URL, fields, body []byte, names []string) (status int, values []string, rc io.ReadCloser, err error) {
	if !t.Parks(u) {
		return 0, nil, nil, fmt.Errorf("h1: Post serves plain http:// URLs only, not %s", u.Redacted())
	}
	fl, err := checkFields(fields)
	if err != nil {
		return 0, nil, nil, err
	}
	p := &post{u: u, fields: fields, body: body, flags: fl}
	addr := hostPort(u)
	for {
		c, err := t.conn(ctx, addr)
		if err != nil {
			return 0, nil, nil, err
		}
		status, values, rc, err = t.tryPost(ctx, p, c, names)
		if err == nil || !c.reused || !lostIdle(err) || !fl.idempotent {
			return status, values, rc, err
		}
	}
}

// post is what Post sends.
type post struct {
	u            *url.URL
	fields, body []byte
	flags        fieldFlags
}

// fieldFlags is what checkFields learned of a request's fields.
type fieldFlags struct {
	agent      bool // a User-Agent field
	idempotent bool // an Idempotency-Key or X-Idempotency-Key field
}

// checkFields checks the header field lines of b (errHeader), as
// checkHeader checks a Header's, and reports what Post must know of them.
func checkFields(b []byte) (fieldFlags, error) {
	var fl fieldFlags
	for len(b) > 0 {
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 {
			return fl, fmt.Errorf("%w: a field line must end in CRLF", errHeader)
		}
		name, value, ok := bytes.Cut(b[:end], []byte(":"))
		if !ok || !validName(name) || !validValue(value) {
			return fl, fmt.Errorf("%w: %q", errHeader, b[:end])
		}
		switch fieldKind(name) {
		case framingName:
			return fl, fmt.Errorf("%w: %s is the framing's", errHeader, name)
		case agentName:
			fl.agent = true
		case idempotencyName:
			fl.idempotent = true
		}
		b = b[end+2:]
	}
	return fl, nil
}

// The kinds of field names checkFields tells apart.
const (
	plainName       = iota
	framingName     // a field the request's framing owns: writeHeader's list, which it leaves out of a Header
	agentName       // User-Agent
	idempotencyName // Idempotency-Key or X-Idempotency-Key
)

// fieldKind returns the kind of a field name, in any case, looking only
// at the names of its length.
func fieldKind(name []byte) int {
	is := func(s string) bool { return bytes.EqualFold(name, []byte(s)) }
	switch len(name) {
	case len("Host"):
		if is("Host") {
			return framingName
		}
	case len("Connection"): // and User-Agent
		if is("Connection") {
			return framingName
		}
		if is("User-Agent") {
			return agentName
		}
	case len("Content-Length"):
		if is("Content-Length") {
			return framingName
		}
	case len("Idempotency-Key"):
		if is("Idempotency-Key") {
			return idempotencyName
		}
	case len("Transfer-Encoding"): // and X-Idempotency-Key
		if is("Transfer-Encoding") {
			return framingName
		}
		if is("X-Idempotency-Key") {
			return idempotencyName
		}
	}
	return plainName
}

// tryPost makes one exchange of p on c, as try does for RoundTrip.
func (t *Transport) tryPost(ctx context.Context, p *post, c *conn, names []string) (int, []string, io.ReadCloser, error) {
	stop := t.watch(ctx, c)
	b := &body{ctx: ctx}
	r, err := c.postExchange(p, &b.fr, names)
	if err != nil {
		return 0, nil, nil, abandon(ctx, c, stop, err)
	}
	return r.status, r.values, b.attach(t, c, stop, !r.closing, r.body, r.empty), nil
}

// postReply is the head of a reply to Post, and the reader of its body.
type postReply struct {
	status  int
	values  []string // of the fields Post was asked for
	closing bool     // the connection closes after the body
	body    io.Reader
	empty   bool // the body has no bytes
}

// postExchange writes p on c and reads the head of its reply (interim
// ones skipped, as exchange does: final), whose body f reads when the head
// was parsed where it lies.
func (c *conn) postExchange(p *post, f *framing, names []string) (postReply, error) {
	if err := c.writePost(p); err != nil {
		return postReply{}, err
	}
	c.lim.n = maxHeadBytes
	defer func() { c.lim.n = unlimited }()
	for {
		r, err := readPostHead(c.br, f, names)
		if err != nil || final(r.status) {
			return r, err
		}
	}
}

// writePost writes p's head and body, and flushes them, as write does
// for a request.
func (c *conn) writePost(p *post) error {
	w := c.writeStart(http.MethodPost, p.u.RequestURI(), strings.TrimSuffix(p.u.Host, ":"), p.flags.agent, false)
	writeLength(w, int64(len(p.body)))
	w.Write(p.fields)
	w.WriteString("\r\n")
	w.Write(p.body)
	return c.writeEnd()
}

// readPostHead reads one reply head from br (readHead), its body read
// through f when the head was parsed where it lies.
func readPostHead(br *bufio.Reader, f *framing, names []string) (postReply, error) {
	var h head
	resp, err := readHead(br, nil, &h, f)
	switch {
	case err != nil:
		return postReply{}, err
	case resp == nil:
		return postReply{status: h.code, values: h.values(names), closing: h.close, body: f, empty: h.length == 0}, nil
	}
	r := postReply{status: resp.StatusCode, values: make([]string, len(names)), body: resp.Body}
	r.closing = resp.Close || resp.StatusCode == http.StatusSwitchingProtocols
	r.empty = resp.Body == http.NoBody || resp.ContentLength == 0
	for i, name := range names {
		r.values[i] = resp.Header.Get(name)
	}
	return r, nil
}

// values returns the values of the fields names (canonical), the first
// of each, copied out of the buffer the head lies in: "" for one absent.
func (h *head) values(names []string) []string {
	values := make([]string, len(names))
	for i, name := range names {
		for _, f := range h.fields[:h.n] {
			if f.key == name {
				values[i] = string(f.value)
				break
			}
		}
	}
	return values
}
