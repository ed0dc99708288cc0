package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
)

// The -raw relay takes the same steps as the others with no
// general-purpose HTTP or JSON layer: HTTP/1.1 heads, bodies and the
// JSON-RPC envelope's top-level members are read and written by hand on
// net.Conn, and each client connection has an upstream connection (and
// session) of its own. It takes what the load client and the fixture send
// (requests with a Content-Length; replies with a Content-Length or
// chunked, JSON or an event stream whose lines end in LF) and refuses
// anything else.

// rawServer relays each of its client connections to the MCP server at
// an http:// URL.
type rawServer struct{ host, path string }

// newRawServer returns the server relaying to the MCP server at upstream.
func newRawServer(upstream string) (*rawServer, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("-raw needs an http:// upstream URL, not %q", upstream)
	}
	return &rawServer{host: u.Host, path: u.RequestURI()}, nil
}

// serve accepts connections on ln and relays each one's requests.
func (rs *rawServer) serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		rc := &rawConn{c: c, br: bufio.NewReader(c), host: rs.host, path: rs.path}
		go rc.serve()
	}
}

// rawConn is one client connection and its upstream.
type rawConn struct {
	c          net.Conn
	br         *bufio.Reader
	host, path string
	up         *rawUpstream // dialled at the first request relayed
	out        []byte
}

// serve answers the connection's requests until it ends or fails.
func (rc *rawConn) serve() {
	defer rc.c.Close()
	defer func() {
		if rc.up != nil {
			rc.up.c.Close()
		}
	}()
	for {
		head, err := readHead(rc.br)
		if err != nil {
			return
		}
		if head.length < 0 || head.length > maxBody {
			rc.respond(400, nil, nil, []byte("a request needs a Content-Length of at most 4 MiB"))
			return
		}
		body := make([]byte, head.length)
		if _, err := io.ReadFull(rc.br, body); err != nil {
			return
		}
		if !rc.answer(body) {
			return
		}
	}
}

// answer answers one request's body; false means the connection must end.
func (rc *rawConn) answer(body []byte) bool {
	m, ok := scanEnvelope(body)
	switch {
	case !ok:
		return rc.respond(400, nil, nil, []byte("the body is not a JSON-RPC message"))
	case m.id == nil:
		return rc.respond(202, nil, nil, nil)
	case string(m.method) == `"initialize"`:
		return rc.respond(200, []byte("Mcp-Session-Id: mcprelay\r\n"), m.id, rpcResult([]byte(initializeResult), nil))
	}
	reply, err := rc.relay(m.method, m.params)
	if err != nil {
		rc.respond(502, nil, nil, []byte(err.Error()))
		return false // the upstream connection is in no known state
	}
	return rc.respond(200, nil, m.id, rpcResult(reply.result, reply.error))
}

// relay sends a request upstream, dialling the upstream first if need
// be, and returns the message that answers it.
func (rc *rawConn) relay(method, params []byte) (*rawMessage, error) {
	if rc.up == nil {
		up, err := dialRaw(rc.host, rc.path)
		if err != nil {
			return nil, err
		}
		rc.up = up
	}
	return rc.up.call(method, params)
}

// rpcResult returns the members after a response's id: its result, or
// its error.
func rpcResult(result, rpcErr []byte) []byte {
	if rpcErr != nil {
		return append([]byte(`,"error":`), rpcErr...)
	}
	return append([]byte(`,"result":`), result...)
}

// respond writes a response of status with more head fields (CRLF
// ended) and, with id set, the JSON-RPC response to id whose members
// follow in rest; without id, rest as plain text.
func (rc *rawConn) respond(status int, fields, id, rest []byte) bool {
	b := append(rc.out[:0], "HTTP/1.1 "...)
	b = append(strconv.AppendInt(b, int64(status), 10), " \r\n"...)
	b = append(b, fields...)
	body := rest
	if id != nil {
		b = append(b, "Content-Type: application/json\r\n"...)
		body = append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), rest...), '}')
	}
	b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(len(body)), 10), "\r\n\r\n"...)
	rc.out = append(b, body...)
	_, err := rc.c.Write(rc.out)
	return err == nil
}

// rawUpstream is an upstream connection with its own session.
type rawUpstream struct {
	c          net.Conn
	br         *bufio.Reader
	host, path string
	session    string
	seq        int
	rest       bool // the end of the last reply's chunked body is unread
	out, lines []byte
}

// dialRaw connects to the upstream and initializes a session on it.
func dialRaw(host, path string) (*rawUpstream, error) {
	c, err := net.Dial("tcp", host)
	if err != nil {
		return nil, err
	}
	u := &rawUpstream{c: c, br: bufio.NewReader(c), host: host, path: path}
	if _, err := u.call([]byte(`"initialize"`), []byte(initializeParams)); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := u.notify(`"notifications/initialized"`); err != nil {
		c.Close()
		return nil, err
	}
	return u, nil
}

// call sends a request (method as JSON) and returns the message that
// answers it.
func (u *rawUpstream) call(method, params []byte) (*rawMessage, error) {
	if err := u.endRest(); err != nil {
		return nil, err
	}
	u.seq++
	id := strconv.AppendInt(nil, int64(u.seq), 10)
	msg := append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":`...), method...)
	if params != nil {
		msg = append(append(msg, `,"params":`...), params...)
	}
	if err := u.post(append(msg, '}')); err != nil {
		return nil, err
	}
	head, err := readHead(u.br)
	if err != nil {
		return nil, err
	}
	if head.session != "" {
		u.session = head.session
	}
	return u.readReply(head, id)
}

// notify sends a notification (method as JSON) and reads its empty reply.
func (u *rawUpstream) notify(method string) error {
	if err := u.endRest(); err != nil {
		return err
	}
	if err := u.post([]byte(`{"jsonrpc":"2.0","method":` + method + `}`)); err != nil {
		return err
	}
	head, err := readHead(u.br)
	if err != nil {
		return err
	}
	if head.status/100 != 2 || head.chunked || head.length > 0 {
		return fmt.Errorf("the upstream answered a notification with HTTP %d", head.status)
	}
	return nil
}

// post writes a POST of msg to the upstream's MCP path.
func (u *rawUpstream) post(msg []byte) error {
	b := append(append(append(u.out[:0], "POST "...), u.path...), " HTTP/1.1\r\nHost: "...)
	b = append(append(b, u.host...), "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	if u.session != "" {
		b = append(append(append(b, "Mcp-Session-Id: "...), u.session...), "\r\nMcp-Protocol-Version: "+protocolVersion+"\r\n"...)
	}
	b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(len(msg)), 10), "\r\n\r\n"...)
	u.out = append(b, msg...)
	_, err := u.c.Write(u.out)
	return err
}

// errRawReply is the error of a reply the -raw relay does not read.
var errRawReply = errors.New("the upstream's reply is not one the -raw relay reads")

// readReply reads the body of a reply with head: the JSON message, or the
// event stream up to the event whose message answers request id.
func (u *rawUpstream) readReply(head rawHead, id []byte) (*rawMessage, error) {
	switch {
	case head.status != 200:
		return nil, fmt.Errorf("the upstream answered HTTP %d", head.status)
	case head.length >= 0 && head.length <= maxBody:
		body := make([]byte, head.length)
		if _, err := io.ReadFull(u.br, body); err != nil {
			return nil, err
		}
		return answerIn(body, id)
	case !head.chunked:
		return nil, errRawReply
	}
	u.rest, u.lines = true, u.lines[:0]
	for {
		chunk, err := u.readChunk()
		if err != nil {
			return nil, err
		}
		if chunk == nil {
			u.rest = false
			return nil, errNoAnswer
		}
		u.lines = append(u.lines, chunk...)
		if m := u.answerInEvents(id); m != nil {
			return m, nil
		}
	}
}

// answerInEvents returns the message that answers request id among the
// whole events gathered in u.lines, and drops those events; nil when none
// does yet.
func (u *rawUpstream) answerInEvents(id []byte) *rawMessage {
	for {
		end := bytes.Index(u.lines, []byte("\n\n"))
		if end < 0 {
			return nil
		}
		event := u.lines[:end+1]
		u.lines = u.lines[end+2:]
		for line := range bytes.Lines(event) {
			data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
			if !ok {
				continue
			}
			if m, err := answerIn(bytes.TrimPrefix(data, []byte(" ")), id); err == nil {
				return m
			}
		}
	}
}

// answerIn returns the message in b when it answers request id.
func answerIn(b, id []byte) (*rawMessage, error) {
	m, ok := scanEnvelope(b)
	if !ok || !bytes.Equal(m.id, id) || m.method != nil {
		return nil, errNoAnswer
	}
	return &m, nil
}

// readChunk reads the next chunk of a chunked body; nil at its end (the
// trailer read too).
func (u *rawUpstream) readChunk() ([]byte, error) {
	line, err := u.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || size < 0 || size > maxBody {
		return nil, errRawReply
	}
	chunk := make([]byte, size+2) // and its CRLF
	if _, err := io.ReadFull(u.br, chunk); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	return chunk[:size], nil
}

// endRest reads the rest of the last reply's chunked body.
func (u *rawUpstream) endRest() error {
	for u.rest {
		chunk, err := u.readChunk()
		if err != nil {
			return err
		}
		u.rest = chunk != nil
	}
	return nil
}

// rawHead is what the -raw relay reads of an HTTP/1.1 head.
type rawHead struct {
	status  int    // a response's status; 0 for a request
	length  int    // Content-Length; -1 when none
	chunked bool   // Transfer-Encoding: chunked
	session string // Mcp-Session-Id
}

// readHead reads an HTTP/1.1 head, of a request or of a response.
func readHead(br *bufio.Reader) (rawHead, error) {
	h := rawHead{length: -1}
	first, err := br.ReadSlice('\n')
	if err != nil {
		return h, err
	}
	if rest, ok := bytes.CutPrefix(first, []byte("HTTP/1.1 ")); ok && len(rest) >= 3 {
		h.status, _ = strconv.Atoi(string(rest[:3]))
	}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return h, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return h, nil
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if h.length, err = strconv.Atoi(string(value)); err != nil {
				h.length = -1
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			h.chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Mcp-Session-Id")):
			h.session = string(value)
		}
	}
}

// rawMessage is the top-level members of a JSON-RPC message, as they
// are in its text; a member it lacks is nil.
type rawMessage struct {
	id, method, params, result, error []byte
}

// scanEnvelope reads the top-level members of the JSON object b; false
// when b is not one.
func scanEnvelope(b []byte) (rawMessage, bool) {
	var m rawMessage
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		keyEnd, ok := skipValue(b, i)
		if !ok || b[i] != '"' {
			return m, false
		}
		key := b[i+1 : keyEnd-1]
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return m, false
		}
		i = skipSpace(b, i+1)
		end, ok := skipValue(b, i)
		if !ok {
			return m, false
		}
		m.set(string(key), b[i:end])
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return m, i < len(b)
}

// set keeps the value of a member the relay reads.
func (m *rawMessage) set(key string, value []byte) {
	switch key {
	case "id":
		m.id = value
	case "method":
		m.method = value
	case "params":
		m.params = value
	case "result":
		m.result = value
	case "error":
		m.error = value
	}
}

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just after the JSON value that starts at
// i: a string, an object or array (its nested values skipped, strings
// heeded), or a literal or number (up to the next delimiter).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return len(b), false
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipValue(b, j)
				if !ok {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	j := i
	for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[j])) {
		j++
	}
	return j, j > i
}
