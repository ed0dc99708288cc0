package registry

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// decodeValue decodes doc as jsonschema.UnmarshalJSON does (objects as
// map[string]any, arrays as []any, numbers as json.Number), for valid JSON
// only: it reports false for anything else, whose error the library's
// decoder words. It reads the document by hand: the library's
// json.Decoder, with its reflection and its copy of the input, was most
// of the validate stage's cost on every call.
func decodeValue(doc []byte) (any, bool) {
	if !mcpgate.ValidJSON(doc) {
		return nil, false
	}
	d := &decoder{doc: doc, text: string(doc)}
	v, _ := d.valueAt(mcpgate.SkipJSONSpace(doc, 0))
	return v, true
}

// decoder reads one valid document. Its strings and numbers are slices of
// text, the document copied once, rather than a copy each.
type decoder struct {
	doc  []byte
	text string
}

// valueAt decodes the value at doc[i], valid JSON, and returns it with the
// index just past it.
func (d *decoder) valueAt(i int) (any, int) {
	switch d.doc[i] {
	case '{':
		return d.objectAt(i)
	case '[':
		return d.arrayAt(i)
	case '"':
		end := stringEnd(d.doc, i)
		return d.unquote(i, end), end
	case 't':
		return true, i + len("true")
	case 'f':
		return false, i + len("false")
	case 'n':
		return nil, i + len("null")
	}
	end := numberEnd(d.doc, i)
	return json.Number(d.text[i:end]), end
}

// objectAt decodes the object at doc[i]; of repeated members the last
// counts, as with encoding/json.
func (d *decoder) objectAt(i int) (map[string]any, int) {
	doc := d.doc
	m := make(map[string]any)
	i = mcpgate.SkipJSONSpace(doc, i+1)
	for doc[i] != '}' {
		end := stringEnd(doc, i)
		key := d.unquote(i, end)
		i = mcpgate.SkipJSONSpace(doc, mcpgate.SkipJSONSpace(doc, end)+1) // past ':'
		m[key], i = d.valueAt(i)
		if i = mcpgate.SkipJSONSpace(doc, i); doc[i] == ',' {
			i = mcpgate.SkipJSONSpace(doc, i+1)
		}
	}
	return m, i + 1
}

// arrayAt decodes the array at doc[i].
func (d *decoder) arrayAt(i int) ([]any, int) {
	doc := d.doc
	a := []any{}
	i = mcpgate.SkipJSONSpace(doc, i+1)
	for doc[i] != ']' {
		var v any
		v, i = d.valueAt(i)
		a = append(a, v)
		if i = mcpgate.SkipJSONSpace(doc, i); doc[i] == ',' {
			i = mcpgate.SkipJSONSpace(doc, i+1)
		}
	}
	return a, i + 1
}

// unquote returns the string the valid JSON string literal doc[i:end]
// holds; one with escapes or invalid UTF-8 goes through encoding/json,
// which replaces invalid UTF-8 and lone surrogates.
func (d *decoder) unquote(i, end int) string {
	s := d.text[i+1 : end-1]
	if strings.IndexByte(s, '\\') < 0 && utf8.ValidString(s) {
		return s
	}
	var out string
	json.Unmarshal(d.doc[i:end], &out) // valid: the document was checked
	return out
}

// stringEnd returns the index just past the valid JSON string at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++ // the escaped byte; a \u escape's hex digits need no care
		case '"':
			return j + 1
		}
	}
}

// numberEnd returns the index just past the valid JSON number at b[i].
func numberEnd(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}
