package h1

import "strings"

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
	if s, ok := commonKeys[string(b)]; ok {
		return s
	}
	return string(b)
}

// commonKeys interns the field names of common responses and requests.
var commonKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
		"Cache-Control", "Connection", "Content-Encoding", "Content-Length",
		"Content-Type", "Date", "Keep-Alive", "Mcp-Protocol-Version",
		"Mcp-Session-Id", "Server", "Transfer-Encoding", "Vary",
		"X-Accel-Buffering", "X-Content-Type-Options",
		// and of the requests the server serves itself
		"Accept", "Accept-Encoding", "Authorization", "Host", "Idempotency-Key",
		"Last-Event-Id", "Origin", "Traceparent", "Tracestate", "User-Agent",
		"X-Agent-Api-Key",
	} {
		m[k] = k
	}
	return m
}()

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
