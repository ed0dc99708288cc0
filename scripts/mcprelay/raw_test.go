package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestScanEnvelopeTopLevel: the members read are the top level's, not
// those of the same names nested in params, in any order.
func TestScanEnvelopeTopLevel(t *testing.T) {
	m, ok := scanEnvelope([]byte(` {"params":{"id":9,"method":"x","s":"}\"{"} , "method" : "tools/call","id":"a\"b","jsonrpc":"2.0"}`))
	if !ok || string(m.id) != `"a\"b"` || string(m.method) != `"tools/call"` || string(m.params) != `{"id":9,"method":"x","s":"}\"{"}` {
		t.Errorf("got %q %q %q %v", m.id, m.method, m.params, ok)
	}
	for _, bad := range []string{``, `[]`, `{"id":1`, `{"id" 1}`, `{"id":"1}`, `{id:1}`} {
		if _, ok := scanEnvelope([]byte(bad)); ok {
			t.Errorf("%q read as an envelope", bad)
		}
	}
}

// FuzzScanEnvelope: on any JSON object without escapes in its keys,
// scanEnvelope reads the members encoding/json reads.
func FuzzScanEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"id":[1,{"x":"]"}]}}}`))
	f.Add([]byte(`{"id":null,"result":{"content":[]},"error":{"code":-1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || bytes.IndexByte(b, '\\') >= 0 {
			return
		}
		m, ok := scanEnvelope(b)
		if !ok {
			t.Fatalf("%q not read", b)
		}
		for key, got := range map[string][]byte{"id": m.id, "method": m.method, "params": m.params, "result": m.result, "error": m.error} {
			if !bytes.Equal(got, want[key]) {
				t.Errorf("%q: %s is %q, want %q", b, key, got, want[key])
			}
		}
	})
}
