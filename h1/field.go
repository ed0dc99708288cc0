package h1

import (
	"net/http"
	"strings"
)

// splitField splits a header line into its canonical name and its value
// with the blanks around it trimmed, as net/textproto reads a field. It
// reports false for what net/textproto would refuse or keep as it is (a
// name with other than token characters, a value with control
// characters), and for a name longer than maxKey.
func splitField(line []byte) (key string, value []byte, ok bool) {
	colon := -1
	for i, c := range line {
		if c == ':' {
			colon = i
			break
		}
		if !tokenByte(c) {
			return "", nil, false
		}
	}
	if colon < 1 || colon > maxKey {
		return "", nil, false
	}
	value = line[colon+1:]
	for _, c := range value {
		if !valueByte(c) {
			return "", nil, false
		}
	}
	return canonicalKey(line[:colon]), trimBlanks(value), true
}

// fieldSet holds the fields of a head parsed where it lies (a response's
// or a request's), and what its Connection field said.
type fieldSet struct {
	fields [maxFields]field
	n      int  // fields used
	values int  // bytes of all the fields' values
	close  bool // Connection: close
	conn   bool // a Connection field was read
}

// field is a header field of a head: its canonical name and its value as
// it lies in the buffer.
type field struct {
	key   string
	value []byte
}

// eachField calls field with the canonical name and the value of each
// field line of b, a head after its first line, up to the blank line that
// ends it; it reports whether every line ends in CRLF and is a field
// splitField reads, field took each, and nothing follows the blank line.
func eachField(b []byte, field func(key string, value []byte) bool) bool {
	for {
		line, rest, ok := cutLine(b)
		if !ok {
			return false
		}
		if len(line) == 0 {
			return len(rest) == 0
		}
		key, value, ok := splitField(line)
		if !ok || !field(key, value) {
			return false
		}
		b = rest
	}
}

// add adds a field; it reports false when the set is full.
func (fs *fieldSet) add(key string, value []byte) bool {
	if fs.n == maxFields {
		return false
	}
	fs.fields[fs.n] = field{key, value}
	fs.n++
	fs.values += len(value)
	return true
}

// connection reads a Connection field: close or keep-alive, alone (a
// second field, whose tokens net/http would read with the first's, is
// refused too).
func (fs *fieldSet) connection(value []byte) bool {
	if fs.conn {
		return false
	}
	fs.conn = true
	if strings.EqualFold(string(value), "close") {
		fs.close = true
		return true
	}
	return strings.EqualFold(string(value), "keep-alive")
}

// header makes the Header of the fields: one string holds every value,
// one slice every field's first.
func (fs *fieldSet) header() http.Header {
	fields := fs.fields[:fs.n]
	hd := make(http.Header, len(fields))
	var sb strings.Builder
	sb.Grow(fs.values)
	for _, f := range fields {
		sb.Write(f.value)
	}
	all := sb.String()
	firsts := make([]string, len(fields))
	at := 0
	for i, f := range fields {
		v := all[at : at+len(f.value)]
		at += len(f.value)
		if vs, ok := hd[f.key]; ok {
			hd[f.key] = append(vs, v)
			continue
		}
		firsts[i] = v
		hd[f.key] = firsts[i : i+1 : i+1]
	}
	return hd
}

// maxKey is the longest field name splitField canonicalizes.
const maxKey = 64

// canonicalKey returns the canonical form of a valid field name (upper
// case first and after each hyphen, lower case elsewhere), without a
// copy for the names an MCP server's responses carry.
func canonicalKey(k []byte) string {
	var buf [maxKey]byte
	b := buf[:len(k)]
	upper := true
	for i, c := range k {
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if s := commonKey(b); s != "" {
		return s
	}
	return string(b)
}

// commonKey returns the canonical field name b as a constant when it is
// one of the names of common responses and requests, and "" otherwise: a
// switch, which the compiler makes a search by length and value, without
// the hashing and the table a map lookup touches.
func commonKey(b []byte) string {
	switch string(b) {
	case "Access-Control-Allow-Origin":
		return "Access-Control-Allow-Origin"
	case "Access-Control-Expose-Headers":
		return "Access-Control-Expose-Headers"
	case "Cache-Control":
		return "Cache-Control"
	case "Connection":
		return "Connection"
	case "Content-Encoding":
		return "Content-Encoding"
	case "Content-Length":
		return "Content-Length"
	case "Content-Type":
		return "Content-Type"
	case "Date":
		return "Date"
	case "Keep-Alive":
		return "Keep-Alive"
	case "Mcp-Protocol-Version":
		return "Mcp-Protocol-Version"
	case "Mcp-Session-Id":
		return "Mcp-Session-Id"
	case "Server":
		return "Server"
	case "Transfer-Encoding":
		return "Transfer-Encoding"
	case "Vary":
		return "Vary"
	case "X-Accel-Buffering":
		return "X-Accel-Buffering"
	case "X-Content-Type-Options":
		return "X-Content-Type-Options"
	// and of the requests the server serves itself
	case "Accept":
		return "Accept"
	case "Accept-Encoding":
		return "Accept-Encoding"
	case "Authorization":
		return "Authorization"
	case "Host":
		return "Host"
	case "Idempotency-Key":
		return "Idempotency-Key"
	case "Last-Event-Id":
		return "Last-Event-Id"
	case "Origin":
		return "Origin"
	case "Traceparent":
		return "Traceparent"
	case "Tracestate":
		return "Tracestate"
	case "User-Agent":
		return "User-Agent"
	case "X-Agent-Api-Key":
		return "X-Agent-Api-Key"
	}
	return ""
}

// trimBlanks trims spaces and tabs at both ends of v.
func trimBlanks(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// tokenByte reports whether c may be in a field name (RFC 9110's tchar).
func tokenByte(c byte) bool { return byteClass[c]&classToken != 0 }

// valueByte reports whether c may be in a field value: a visible
// character, a space, a tab or obs-text (0x80 and above).
func valueByte(c byte) bool { return byteClass[c]&classValue != 0 }

// Classes of bytes in byteClass.
const (
	classToken = 1 << iota
	classValue
)

// byteClass holds the classes of every byte, for the loops over a head.
var byteClass = func() (t [256]byte) {
	for c := range 256 {
		if c == '\t' || c >= ' ' && c != 0x7f {
			t[c] |= classValue
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0 {
			t[c] |= classToken
		}
	}
	return t
}()
