package mcpclient

import (
	"bytes"
	"reflect"
	"testing"
)

// envelopeCases are messages decodeMessage must read as encoding/json
// does, including the ones it hands to encoding/json.
var envelopeCases = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"quoted\" } ]"}]}}`,
	` { "jsonrpc" : "2.0" , "id" : "x\"y" , "result" : null } `,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":{"a":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":7,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[]}}`,
	`{"jsonrpc":"2.0","method":"a\u002fb","params":[true,false,null,-1.5e3]}`,
	`{"jsonrpc":"2.0","method":null,"id":null}`,
	`{"ID":4,"Result":{"x":1}}`,
	`{"\u0069d":5,"result":{}}`,
	`{"id":1,"result":{},"id":2}`,
	`{"id":1,"extra":{"id":9,"result":[]},"result":[[],{}]}`,
	`{}`,
	// Not messages:
	`{"id":1,"method":5}`,
	`{"id":1,"error":"broken"}`,
	`{"id":1,"error":{"code":"x"}}`,
	`[{"id":1,"result":{}}]`,
	`"text"`,
	`{"id":1,"result":{}`,
	`{"id":1,"result":{}} trailing`,
	``,
}

// TestDecodeMessageAsEncodingJSON checks the envelope scanner against
// encoding/json on every case.
func TestDecodeMessageAsEncodingJSON(t *testing.T) {
	for _, c := range envelopeCases {
		checkEnvelope(t, []byte(c))
	}
}

// FuzzDecodeMessage checks the envelope scanner against encoding/json.
func FuzzDecodeMessage(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkEnvelope(t, data) })
}

// checkEnvelope compares decodeMessage with encoding/json on data, and
// checks that the result does not share data's memory.
func checkEnvelope(t *testing.T, data []byte) {
	t.Helper()
	data = bytes.Clone(data) // cleared below
	got, ok := decodeMessage(data)
	want, wantOK := decodeSlowly(data)
	if ok != wantOK {
		t.Fatalf("%q: decoded %v, encoding/json %v", data, ok, wantOK)
	}
	if !ok {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
	}
	orig := bytes.Clone(data)
	clear(data)
	if again, _ := decodeSlowly(orig); !reflect.DeepEqual(got, again) {
		t.Fatalf("%q: the message changed with the buffer it came from", orig)
	}
}

// The envelope of a relayed result costs two allocations (the copy of
// the message and the envelope), where encoding/json took nine (more
// under the race detector, for both).
func TestDecodeMessageAllocs(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"This is a simple text response for testing."}]}}`)
	scan := testing.AllocsPerRun(100, func() { decodeMessage(data) })
	slow := testing.AllocsPerRun(100, func() { decodeSlowly(data) })
	if scan*3 > slow {
		t.Errorf("%v allocations per message, encoding/json %v: want at most a third", scan, slow)
	}
}

// BenchmarkDecodeMessage measures the envelope of a tool's result, read
// by the scanner and by encoding/json.
func BenchmarkDecodeMessage(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"This is a simple text response for testing."}]}}`)
	for name, decode := range map[string]func([]byte) (*message, bool){"scan": decodeMessage, "encoding-json": decodeSlowly} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decode(data)
			}
		})
	}
}
