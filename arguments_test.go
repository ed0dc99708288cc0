package mcpgate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{` { "n" : 1.0 , "m": 10e-1, "z": -0, "big": 12345678901234567890123 } `, `{"big":12345678901234567890123,"m":1,"n":1,"z":0}`},
		{`{"s":"<\u00e9>"}`, `{"s":"<é>"}`},
		{`[1.5e70, 15000000000000000000000000000000000000000000000000000000000000000000000, 1e100, 0.25e1]`,
			`[15000000000000000000000000000000000000000000000000000000000000000000000,15000000000000000000000000000000000000000000000000000000000000000000000,1e+100,2.5]`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"attachments":[{"file_id":"f1"}]}`, `{"attachments":[{"file_id":"f1"}]}`},
	} {
		got, err := mcpgate.CanonicalJSON([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if string(got) != tc.want {
			t.Errorf("CanonicalJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{`{`, `{} {}`, `nope`} {
		if _, err := mcpgate.CanonicalJSON([]byte(bad)); mcpgate.ErrorCode(err) != mcpgate.EINVALID {
			t.Errorf("CanonicalJSON(%s): err = %v, want EINVALID", bad, err)
		}
	}
}

func TestHashArguments(t *testing.T) {
	h := func(tool, args string) string {
		t.Helper()
		s, err := mcpgate.HashArguments(tool, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if h("t", `{"a":1,"b":2}`) != h("t", `{"b":2.0,"a":1}`) {
		t.Error("equal arguments hash differently")
	}
	if h("t", `{}`) != h("t", ``) {
		t.Error("absent arguments differ from {}")
	}
	if h("t", `{"a":1}`) == h("u", `{"a":1}`) {
		t.Error("the tool name is not in the hash")
	}
	if h("t", `{"a":1}`) == h("t", `{"a":"1"}`) {
		t.Error("a number and a string hash the same")
	}
	if h("t", `{"attachments":[{"file_id":"a"}]}`) == h("t", `{"attachments":[{"file_id":"b"}]}`) {
		t.Error("attachments are not in the hash")
	}
}

// FuzzHashArguments checks that a second, differently written encoding of
// the same JSON value (keys in reverse order, spaces, numbers rescaled,
// every string character escaped) hashes the same as the first, and that
// a hasher reused from input to input (as the audit log's writer reuses
// one) hashes the decoded value as HashArguments hashes the text.
func FuzzHashArguments(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1,2.5,"x"]}`, `{"k":{"z":null,"y":true}}`, `[1e3,-0.0,"é<>&"]`, `"x"`, `12`} {
		f.Add(s)
	}
	var reused mcpgate.ArgumentsHasher
	f.Fuzz(func(t *testing.T, in string) {
		d := json.NewDecoder(strings.NewReader(in))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil || d.More() || !utf8.ValidString(in) {
			return
		}
		var other bytes.Buffer
		reencode(&other, v)
		a, errA := mcpgate.HashArguments("tool", json.RawMessage(in))
		b, errB := mcpgate.HashArguments("tool", other.Bytes())
		if errA != nil || errB != nil {
			t.Fatalf("hash errors: %v, %v (second encoding %s)", errA, errB, other.Bytes())
		}
		if a != b {
			t.Fatalf("%s and %s hash differently", in, other.Bytes())
		}
		if c, err := reused.Hash("tool", v); err != nil || c != a {
			t.Fatalf("the reused hasher gives %s (%v) for %s, HashArguments %s", c, err, in, a)
		}
	})
}

// reencode writes v another way than it was probably written.
func reencode(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" ,\n")
			}
			escapeAll(buf, k)
			buf.WriteString(" : ")
			reencode(buf, v[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				buf.WriteString(" , ")
			}
			reencode(buf, e)
		}
		buf.WriteString(" ]")
	case json.Number:
		s := string(v)
		if !strings.ContainsAny(s, ".eE") {
			s += ".00e0" // 12 becomes 12.00e0
		}
		buf.WriteString(s)
	case string:
		escapeAll(buf, v)
	default:
		b, _ := json.Marshal(v)
		buf.Write(b)
	}
}

// escapeAll writes s as a JSON string with every character escaped.
func escapeAll(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		if r > 0xFFFF {
			buf.WriteRune(r)
			continue
		}
		fmt.Fprintf(buf, `\u%04x`, r)
	}
	buf.WriteByte('"')
}

// FuzzCanonicalString holds the canonical form of a string, which skips
// the encoder for plain ones, to encoding/json without HTML escaping.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "<>&", "\x7f\x00\n", "é\u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, _ := json.Marshal(s)
		var decoded string // invalid UTF-8 comes back as U+FFFD
		if err := json.Unmarshal(in, &decoded); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		e := json.NewEncoder(&want)
		e.SetEscapeHTML(false)
		if err := e.Encode(decoded); err != nil {
			t.Fatal(err)
		}
		got, err := mcpgate.CanonicalJSON(in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("canonical %q, encoder %q", got, want.String())
		}
	})
}
