package audit

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// resultSize returns the length of res encoded as JSON (what json.Marshal
// writes), 0 when it does not encode. A result of plain content blocks,
// the common case, is measured without being encoded: encoding it again
// only to count its bytes was a twentieth of an audited call's CPU.
func resultSize(res *mcpgate.Result) int {
	if len(res.Raw) > 0 {
		return len(res.Raw)
	}
	if n, ok := plainResultSize(res); ok {
		return n
	}
	b, err := json.Marshal(res)
	if err != nil {
		return 0
	}
	return len(b)
}

// plainResultSize measures a result without JSON of its own (no
// structured content, no _meta); ok is false for any other.
func plainResultSize(res *mcpgate.Result) (n int, ok bool) {
	if len(res.StructuredContent) > 0 || len(res.Meta) > 0 {
		return 0, false
	}
	n = len(`{"content":[]}`)
	for i := range res.Content {
		c := &res.Content[i]
		if len(c.Meta) > 0 && c.Type != "text" {
			return 0, false
		}
		if i > 0 {
			n++ // the comma
		}
		n += contentSize(c)
	}
	if res.IsError {
		n += len(`,"isError":true`)
	}
	return n, true
}

// contentSize measures a content block without _meta. A text block is
// written with its type and text alone (Content.MarshalJSON).
func contentSize(c *mcpgate.Content) int {
	if c.Type == "text" {
		return len(`{"type":"text","text":}`) + stringSize(c.Text)
	}
	n := len(`{"type":}`) + stringSize(c.Type)
	n += optionalSize("text", c.Text) + optionalSize("data", c.Data) + optionalSize("uri", c.URI)
	n += optionalSize("name", c.Name) + optionalSize("mimeType", c.MimeType)
	if c.Size != 0 {
		n += len(`,"size":`) + len(strconv.FormatInt(c.Size, 10))
	}
	if r := c.Resource; r != nil {
		n += len(`,"resource":{"uri":}`) + stringSize(r.URI)
		n += optionalSize("mimeType", r.MimeType) + optionalSize("text", r.Text) + optionalSize("blob", r.Blob)
	}
	return n
}

// optionalSize measures `,"name":value` of a string field marked
// omitempty: nothing when the value is empty.
func optionalSize(name, s string) int {
	if s == "" {
		return 0
	}
	return len(`,"":`) + len(name) + stringSize(s)
}

// stringSize is the length of s as encoding/json writes it, quotes
// included: HTML characters, control characters, U+2028, U+2029 and
// invalid UTF-8 escaped.
func stringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			n += asciiSize(b)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// asciiSize is the length of an ASCII byte as encoding/json writes it in
// a string.
func asciiSize(b byte) int {
	switch b {
	case '"', '\\', '\b', '\f', '\n', '\r', '\t':
		return 2
	case '<', '>', '&':
		return len(`\u003c`)
	}
	if b < 0x20 {
		return len(`\u0000`)
	}
	return 1
}
