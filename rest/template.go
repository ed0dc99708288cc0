package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// walkTemplate copies the JSON template tpl to buf, handing each string
// value (not object keys) to str to write in its place.
func walkTemplate(tpl json.RawMessage, buf *bytes.Buffer, str func(s string, buf *bytes.Buffer) error) error {
	dec := json.NewDecoder(bytes.NewReader(tpl))
	dec.UseNumber()
	if err := walkValue(dec, buf, str); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("body template: more than one JSON value")
	}
	return nil
}

// walkValue copies one JSON value from dec to buf.
func walkValue(dec *json.Decoder, buf *bytes.Buffer, str func(s string, buf *bytes.Buffer) error) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("body template: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		return walkComposite(dec, buf, t, str)
	case string:
		return str(t, buf)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// walkComposite copies the rest of an object or array opened by delim.
func walkComposite(dec *json.Decoder, buf *bytes.Buffer, delim json.Delim, str func(s string, buf *bytes.Buffer) error) error {
	buf.WriteString(delim.String())
	for i := 0; dec.More(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		if delim == '{' {
			key, err := dec.Token()
			if err != nil {
				return fmt.Errorf("body template: %w", err)
			}
			WriteJSONString(buf, key.(string))
			buf.WriteByte(':')
		}
		if err := walkValue(dec, buf, str); err != nil {
			return err
		}
	}
	end, err := dec.Token()
	if err != nil {
		return fmt.Errorf("body template: %w", err)
	}
	buf.WriteString(end.(json.Delim).String())
	return nil
}

// WriteJSONString writes s to buf as a JSON string, escaped exactly as
// encoding/json escapes it.
func WriteJSONString(buf *bytes.Buffer, s string) {
	if !strings.ContainsFunc(s, needsEscape) {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}

// needsEscape reports whether r is written escaped, or replaced, in a
// JSON string by json.Marshal.
func needsEscape(r rune) bool {
	return r < ' ' || r == '"' || r == '\\' || r == '<' || r == '>' || r == '&' ||
		r >= utf8.RuneSelf
}
