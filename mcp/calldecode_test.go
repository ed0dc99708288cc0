package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// callParamsSeeds are tools/call params the fuzzers start from: the common
// shape, and each case scanCallParams leaves to encoding/json.
var callParamsSeeds = []string{
	`{"name":"convert_units","arguments":{"value":10,"from":"km","to":"mi"}}`,
	` { "name" : "t" , "arguments" : { "a" : [ 1 , "}" ] } , "_meta" : { "progressToken" : "p\"1" , "x" : 1 } , "task" : { "ttl" : 5 } } `,
	`{"name":"t","arguments":null,"_meta":null,"task":null}`,
	`{"name":"t","Name":"u"}`,
	`{"NAME":"t"}`,
	`{"name":"t","name":"u"}`,
	`{"n\u0061me":"t"}`,
	`{"name":"t","_meta":{"progressToken":1},"_meta":{"progressToken":2}}`,
	`{"name":"t","_meta":{},"_meta":{"progressToken":2}}`,
	`{"name":"t","_meta":{"progressToken":1,"PROGRESSTOKEN":2}}`,
	`{"name":"t","_meta":{"progressToken":1,"progressToken":2}}`,
	`{"name":"t","_meta":"x"}`,
	`{"name":"t","_meta":[1]}`,
	`{"name":5,"arguments":"x","task":true}`,
	`{"ſask":{},"name":"t"}`,
	`{"other":{"name":"x"},"name":"t"}`,
	`{}`,
}

// FuzzScanCallParams checks the hand decoder of tools/call params against
// encoding/json: when scanCallParams accepts params, encoding/json decodes
// them without error into the same members, byte for byte.
func FuzzScanCallParams(f *testing.F) {
	for _, s := range callParamsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) || firstByte(params) != '{' {
			t.Skip("decode accepts only valid JSON; params of another type never reach the scan")
		}
		var got, want callParams
		if !scanCallParams(params, &got) {
			return
		}
		if err := json.Unmarshal(params, &want); err != nil {
			t.Fatalf("scanCallParams accepted %s, encoding/json refuses it: %v", params, err)
		}
		for _, m := range []struct {
			name      string
			got, want json.RawMessage
		}{
			{"name", got.Name, want.Name}, {"arguments", got.Arguments, want.Arguments},
			{"task", got.Task, want.Task}, {"_meta.progressToken", got.Meta.ProgressToken, want.Meta.ProgressToken},
		} {
			if !bytes.Equal(m.got, m.want) || (m.got == nil) != (m.want == nil) {
				t.Errorf("%s of %s: scanned %q, encoding/json %q", m.name, params, m.got, m.want)
			}
		}
	})
}

// TestScanCallParamsCommon checks that the common shapes take the hand
// path, and that decodeCall's answers stay those of encoding/json for the
// others.
func TestScanCallParamsCommon(t *testing.T) {
	for _, s := range callParamsSeeds[:3] {
		var p callParams
		if !scanCallParams([]byte(s), &p) {
			t.Errorf("scanCallParams(%s) left it to encoding/json", s)
		}
	}
	for _, s := range callParamsSeeds {
		var viaJSON callParams
		wantErr := unmarshalParams(json.RawMessage(s), &viaJSON)
		var p callParams
		err := decodeCallParams(json.RawMessage(s), &p)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("decodeCallParams(%s) = %v, encoding/json's = %v", s, err, wantErr)
		}
		if err == nil && (string(p.Name) != string(viaJSON.Name) || string(p.Arguments) != string(viaJSON.Arguments) ||
			string(p.Task) != string(viaJSON.Task) || string(p.Meta.ProgressToken) != string(viaJSON.Meta.ProgressToken)) {
			t.Errorf("decodeCallParams(%s) = %+v, encoding/json's = %+v", s, p, viaJSON)
		}
	}
}

// TestDecodeCallAllocs checks that decoding the common tools/call params
// allocates only the parsed call and its name (encoding/json's reflection
// took eight).
func TestDecodeCallAllocs(t *testing.T) {
	params := json.RawMessage(callParamsSeeds[0])
	if n := testing.AllocsPerRun(100, func() { decodeCall(params) }); n > 2 {
		t.Errorf("decodeCall: %v allocations, want at most 2", n)
	}
}

func BenchmarkDecodeCall(b *testing.B) {
	params := json.RawMessage(callParamsSeeds[0])
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeCall(params)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p callParams
			unmarshalParams(params, &p)
		}
	})
}
