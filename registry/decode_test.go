package registry

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzDecodeValue checks the hand decoder of the validate stage against
// the JSON Schema library's own decoder (encoding/json with UseNumber):
// the same value for every valid document, and no value for the others.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{
		`{"value":10,"from":"km","to":"mi"}`,
		` { "a" : [ 1 , -2.5e+3 , "x\"y" , true , false , null , { } , [ ] ] , "b" : { "c" : "\u00e9\ud800\\" } } `,
		`{"a":1,"a":2}`, `"caf\u00e9"`, "\"\xff\xfe\"", `{"\u0061":"k"}`, `0`, `-0.0E-0`, `[]`, `null`,
		`{"a":1} {"b":2}`, `{"a":}`, ``, ` `, `[1,]`, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		got, ok := decodeValue(doc)
		if ok != (wantErr == nil) {
			t.Fatalf("decodeValue(%q) ok = %v, the library's error = %v", doc, ok, wantErr)
		}
		if diff := cmp.Diff(want, got); ok && diff != "" {
			t.Fatalf("decodeValue(%q) differs from the library's decoder (-want +got):\n%s", doc, diff)
		}
	})
}

// TestDecodeArgumentsAllocs checks that the validate stage decodes common
// arguments in a few allocations (the map, its entries, the number): the
// library's json.Decoder took 17.
func TestDecodeArgumentsAllocs(t *testing.T) {
	doc := json.RawMessage(`{"value":10,"from":"km","to":"mi"}`)
	if n := testing.AllocsPerRun(100, func() { decodeValue(doc) }); n > 6 {
		t.Errorf("decodeValue: %v allocations, want at most 6", n)
	}
}

func BenchmarkDecodeArguments(b *testing.B) {
	doc := json.RawMessage(`{"value":10,"from":"km","to":"mi"}`)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeValue(doc)
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		}
	})
}
