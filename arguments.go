package mcpgate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"
)

// HashArguments returns the hex SHA-256 of the tool name and the canonical
// form of its arguments (CanonicalJSON): two calls of one tool whose
// arguments are equal JSON hash the same however they were written. It is
// what binds an idempotency key to a call. Returns EINVALID when args is
// not JSON.
func HashArguments(tool string, args json.RawMessage) (string, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	canon, err := CanonicalJSON(args)
	if err != nil {
		return "", err
	}
	return HashCanonical(tool, canon), nil
}

// HashDecodedArguments is HashArguments of arguments already decoded with
// json.Decoder.UseNumber, for callers that decode them anyway.
func HashDecodedArguments(tool string, v any) (string, error) {
	var h ArgumentsHasher
	return h.Hash(tool, v)
}

// HashCanonical hashes a tool name and canonical arguments.
func HashCanonical(tool string, canon []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canon)
	var sum [sha256.Size]byte
	return hexString(h.Sum(sum[:0]))
}

// ArgumentsHasher is HashDecodedArguments with a buffer kept from one hash
// to the next, for a goroutine that hashes call after call (the audit
// log's writer): a hash then costs one allocation, its result. The zero
// value is ready; it is not safe for concurrent use.
type ArgumentsHasher struct {
	buf bytes.Buffer
}

// Hash returns HashDecodedArguments(tool, v).
func (h *ArgumentsHasher) Hash(tool string, v any) (string, error) {
	h.buf.Reset()
	h.buf.WriteString(tool)
	h.buf.WriteByte(0)
	if err := writeCanonical(&h.buf, v); err != nil {
		return "", err
	}
	sum := sha256.Sum256(h.buf.Bytes())
	return hexString(sum[:]), nil
}

// hexString is hex.EncodeToString of a SHA-256 sum in one allocation.
func hexString(sum []byte) string {
	var out [2 * sha256.Size]byte
	return string(out[:hex.Encode(out[:], sum)])
}

// CanonicalJSON returns one encoding of the JSON value in raw that every
// equal value shares: no insignificant space, object keys sorted bytewise
// (the last of duplicate keys wins, as when decoding), strings escaped the
// way encoding/json escapes them without HTML escaping, and numbers written
// from their value (1, 1.0 and 10e-1 are all 1; -0 is 0), compared at 256
// bits of precision. Returns EINVALID when raw is not JSON.
func CanonicalJSON(raw []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, Errorf(EINVALID, "arguments are not JSON: %v", err)
	}
	if d.More() {
		return nil, Errorf(EINVALID, "arguments hold more than one JSON value")
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeCanonical writes v, a value decoded with UseNumber, canonically.
func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		return writeCanonicalObject(buf, v)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case json.Number:
		buf.WriteString(canonicalNumber(string(v)))
	case string:
		writeCanonicalString(buf, v)
	case bool, nil:
		b, _ := json.Marshal(v)
		buf.Write(b)
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

// writeCanonicalObject writes an object with its keys sorted.
func writeCanonicalObject(buf *bytes.Buffer, m map[string]any) error {
	var small [16]string // most objects' keys fit: no allocation
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeCanonicalString(buf, k)
		buf.WriteByte(':')
		if err := writeCanonical(buf, m[k]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// writeCanonicalString writes s as a JSON string without HTML escaping.
func writeCanonicalString(buf *bytes.Buffer, s string) {
	if plainString(s) {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	e := json.NewEncoder(buf)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)             // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// plainString reports whether s is printable ASCII without a quote or a
// backslash, which JSON writes as it is: most names and values, spared an
// encoder each.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= utf8.RuneSelf || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}

// canonicalNumber writes a JSON number from its value: an integer below
// 2^256 in digits, any other number in %g form. A number beyond big.Float's
// exponent range keeps its literal form.
func canonicalNumber(s string) string {
	if plainInteger(s) {
		return s // the common case, written as the big path would write it
	}
	f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return s
	}
	if f.Sign() == 0 {
		if mantissaIsZero(s) {
			return "0"
		}
		return s // too small for the exponent: keep it apart from 0
	}
	if f.IsInt() && f.MantExp(nil) <= 256 {
		i, _ := f.Int(nil)
		return i.String() // below 2^256: exact at 256 bits
	}
	return f.Text('g', -1)
}

// maxPlainDigits bounds the integers written digit by digit: 70 decimal
// digits are below 2^233, exact at 256 bits of precision.
const maxPlainDigits = 70

// plainInteger reports whether s is an integer as canonical JSON writes it:
// an optional minus, no leading zero, at most maxPlainDigits digits, and
// not -0.
func plainInteger(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > maxPlainDigits || (digits[0] == '0' && (len(digits) > 1 || digits != s)) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// mantissaIsZero reports whether the digits before a number's exponent are
// all zeros.
func mantissaIsZero(s string) bool {
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E':
			return true
		case c >= '1' && c <= '9':
			return false
		}
	}
	return true
}
