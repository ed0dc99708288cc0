package mcpgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// appendJSON appends the result's fields as encoding/json would marshal
// them (the bytes are the same: compact, strings and raw members with
// HTML characters, U+2028 and U+2029 escaped), without its reflection: a
// result is encoded on every call.
func (r *Result) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"content":[`...)
	for i := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = r.Content[i].appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	b, err := appendRawMember(b, `,"structuredContent":`, r.StructuredContent)
	if err != nil {
		return nil, err
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if b, err = appendRawMember(b, `,"_meta":`, r.Meta); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSON appends the block as its MarshalJSON writes it; text blocks,
// nearly every block there is, without reflection.
func (c *Content) appendJSON(b []byte) ([]byte, error) {
	if c.Type != "text" {
		enc, err := c.MarshalJSON()
		return append(b, enc...), err // compact and escaped: json.Marshal wrote it
	}
	b = append(b, `{"type":"text","text":`...)
	return append(appendJSONString(b, c.Text), '}'), nil
}

// errInvalidRaw is the error of a raw member that is not valid JSON.
var errInvalidRaw = errors.New("json: a raw member of the result is not valid JSON")

// appendRawMember appends name and raw, compacted and HTML-escaped as
// encoding/json writes a json.RawMessage; nothing when raw is empty (the
// members are omitempty).
func appendRawMember(b []byte, name string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	if !ValidJSON(raw) {
		return nil, errInvalidRaw
	}
	b = append(b, name...)
	if !bytes.ContainsAny(raw, " \t\r\n<>&\u2028\u2029") {
		return append(b, raw...), nil
	}
	var buf bytes.Buffer
	json.Compact(&buf, raw) // valid: checked above
	out := bytes.NewBuffer(b)
	json.HTMLEscape(out, buf.Bytes())
	return out.Bytes(), nil
}

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes a string: quote,
// backslash and control characters escaped (\b \f \n \r \t by name), <, >
// and & as \u escapes, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = appendEscapedByte(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// appendEscapedByte appends the escape of an ASCII byte that JSON, or
// encoding/json's HTML safety, escapes.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
