package rest

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// decodeLikeValidate decodes arguments as the pipeline's validate stage
// does (numbers as json.Number), for Call.Decoded.
func decodeLikeValidate(tb testing.TB, raw string) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// TestCallToolUsesDecoded checks that the backend takes the arguments the
// validate stage decoded (Call.Decoded) instead of decoding Arguments
// again: here the two differ on purpose, and the request carries the
// decoded value.
func TestCallToolUsesDecoded(t *testing.T) {
	var got received
	srv := mustServe(t, recorder(&got))
	call := newCall(srv.URL, &mcpgate.Request{Method: "POST", Path: "/things/{id}"}, `{"id":"raw","n":1}`)
	call.Decoded = map[string]any{"id": "decoded", "n": json.Number("2")}
	if res := mustCall(t, New(nil), call); res.IsError {
		t.Fatalf("result is an error: %s", resultText(res))
	}
	if got.URI != "/things/decoded" || got.Body != `{"n":2}` {
		t.Errorf("request %s with body %s, want /things/decoded with {\"n\":2}", got.URI, got.Body)
	}
}

// TestCallToolDecodedSameRequest checks that a call sends the same request
// whether it reads the arguments from Call.Decoded or from their JSON:
// strings with escapes and non-ASCII text, numbers as sent, literals, and
// objects or arrays (for which the backend reads the JSON, where the
// members' order is kept). A string sent with an escape JSON does not
// need (\u00e9 for é) goes to the API unescaped: the same JSON value, not
// the same bytes.
func TestCallToolDecodedSameRequest(t *testing.T) {
	req := &mcpgate.Request{Method: "POST", Path: "/x/{id}", Query: map[string]string{"q": "{q}"},
		Headers: map[string]string{"X-Tag": "{tag}"}}
	for _, tt := range []struct {
		args  string
		exact bool // the body's bytes are the same, not only its value
	}{
		{`{"id":"a b/c","q":"x&y","tag":"t","text":"café <b> & \"q\" \\ \t\n\u0001 ✓","n":1.50e3,"t":true,"f":false,"z":null}`, true},
		{`{"id":"\u00e9","q":"x","tag":"\/slash","text":"caf\u00e9 \u2028"}`, false},
		{`{"id":7,"q":-0.5,"tag":"t","s":"plain"}`, true},
		{`{"id":"i","q":"q","tag":"t","o":{"b":1,"a":[2,"x"]}}`, true},
		{`{"id":"i","q":["a","b"],"tag":"t"}`, true},
		{`{}`, true},
	} {
		var plain, decoded received
		srv := mustServe(t, recorder(&plain, "X-Tag"))
		mustCall(t, New(nil), newCall(srv.URL, req, tt.args))
		srv = mustServe(t, recorder(&decoded, "X-Tag"))
		call := newCall(srv.URL, req, tt.args)
		call.Decoded = decodeLikeValidate(t, tt.args)
		mustCall(t, New(nil), call)
		if !tt.exact && plain.Body != decoded.Body {
			if diff := cmp.Diff(decodeLikeValidate(t, plain.Body), decodeLikeValidate(t, decoded.Body)); diff != "" {
				t.Errorf("arguments %s: body from Decoded differs (-JSON +Decoded):\n%s", tt.args, diff)
			}
			decoded.Body = plain.Body
		}
		if diff := cmp.Diff(plain, decoded); diff != "" {
			t.Errorf("arguments %s: request from Decoded differs (-JSON +Decoded):\n%s", tt.args, diff)
		}
	}
}

// TestDecodedArgsFallback checks which decoded values the backend takes
// and which send it back to the JSON.
func TestDecodedArgsFallback(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want bool
	}{
		{nil, false},
		{[]any{"a"}, false},
		{map[string]any{"a": map[string]any{}}, false},
		{map[string]any{"a": []any{}}, false},
		{map[string]any{"a": float64(1)}, false}, // not decoded with UseNumber
		{map[string]any{}, true},
		{map[string]any{"a": "s", "b": json.Number("1"), "c": true, "d": nil}, true},
	} {
		if _, ok := decodedArgs(tt.v); ok != tt.want {
			t.Errorf("decodedArgs(%#v) ok = %v, want %v", tt.v, ok, tt.want)
		}
	}
}

// FuzzAppendJSONText checks appendJSONText against encoding/json: the
// result is valid JSON that decodes to the string, and a string that needs
// no escape comes out as encoding/json writes it without HTML escaping.
func FuzzAppendJSONText(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\x00\x1f\x7f\t\r\n", "café ✓ \u2028", "<a&b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("decoded strings are valid UTF-8")
		}
		b := appendJSONText(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("appendJSONText(%q) = %s, decodes to %q, %v", s, b, back, err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if !bytes.ContainsAny([]byte(s), "\u2028\u2029") && string(b)+"\n" != want.String() {
			t.Errorf("appendJSONText(%q) = %s, encoding/json writes %s", s, b, want.String())
		}
	})
}
