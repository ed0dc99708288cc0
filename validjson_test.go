package mcpgate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonCases are inputs at the edges of the grammar, valid and not.
var jsonCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, "\t\n\r[]\r\n", `{`, `}`, `[`, `]`, `{]`, `[}`, `[[]`, `[]]`, `{}{}`, `{},`,
	`0`, `-0`, `01`, `-01`, `1.`, `1.0`, `.1`, `1e`, `1e+`, `1e5`, `1E-5`, `1.5e+10`, `-`, `--1`, `+1`, `1x`, `0x1`,
	`1.0.0`, `123456789012345678901234567890`, `-1.5E-0`, `1e05`, `0e0`, `0.e1`,
	`true`, `false`, `null`, `tru`, `nul`, `truex`, `True`, `NULL`, `[true,false,null]`, `[true false]`,
	`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00e"`, `"\x"`,
	`"\'"`, "\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"é\"", `"unterminated`, `"\`, `"\u`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1,"b":[1,2,{"c":null}]}`, `{"a":1 "b":2}`,
	`{,"a":1}`, `[1,]`, `[,1]`, `[1,,2]`, `[1 2]`, `[[[[]]]]`, `[{}, {"x":[]}]`, `{"":""}`, `{"a":{"b":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	"[1]\x00", `[1] x`, `"a" "b"`, `{"a":1}}`, `{"a":[1}`, `{"a":{]}`,
}

// TestValidJSONAsEncodingJSON: every case, and nests around each, get
// encoding/json.Valid's answer.
func TestValidJSONAsEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		for _, in := range []string{c, "[" + c + "]", `{"k":` + c + `}`, `[1,` + c + `,2]`} {
			if got, want := ValidJSON([]byte(in)), json.Valid([]byte(in)); got != want {
				t.Errorf("ValidJSON(%q) = %v, encoding/json says %v", in, got, want)
			}
		}
	}
}

// TestValidJSONDepth: as encoding/json, 10,000 nested containers are
// valid and 10,001 are not.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{63, 64, 65, 255, 256, 257, maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, open := range []string{"[", `{"k":`, `[{"k":`} {
			closeOf := map[string]string{"[": "]", `{"k":`: "}", `[{"k":`: "}]"}[open]
			depth := n / (1 + strings.Count(open, "{") + strings.Count(open, "[") - 1)
			in := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closeOf, depth))
			if got, want := ValidJSON(in), json.Valid(in); got != want {
				t.Errorf("%d × %q: ValidJSON %v, encoding/json %v", depth, open, got, want)
			}
		}
	}
}

// TestValidJSONAtRandom compares the two on random documents and their
// random corruptions.
func TestValidJSONAtRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"{", "}", "[", "]", ",", ":", `"a"`, `"\u00e9"`, "1", "-2.5e3", "true", "null", " ", `"`, `\`, "0", "e"}
	for i := range 20000 {
		var b []byte
		if i%2 == 0 {
			b, _ = json.Marshal(randomValue(rnd, 4))
			if len(b) > 0 && rnd.IntN(2) == 0 {
				b[rnd.IntN(len(b))] = pieces[rnd.IntN(len(pieces))][0]
			}
		} else {
			for range rnd.IntN(12) {
				b = append(b, pieces[rnd.IntN(len(pieces))]...)
			}
		}
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("ValidJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	}
}

// randomValue is a random value of at most depth levels.
func randomValue(rnd *rand.Rand, depth int) any {
	switch n := rnd.IntN(7); {
	case depth > 0 && n == 0:
		m := map[string]any{}
		for range rnd.IntN(4) {
			m[string(rune('a'+rnd.IntN(26)))+"\u00e9\n"] = randomValue(rnd, depth-1)
		}
		return m
	case depth > 0 && n == 1:
		var a []any
		for range rnd.IntN(4) {
			a = append(a, randomValue(rnd, depth-1))
		}
		return a
	case n == 2:
		return rnd.NormFloat64() * 1e10
	case n == 3:
		return rnd.IntN(2) == 0
	case n == 4:
		return nil
	default:
		return string(rune(rnd.IntN(0x800))) + `"\`
	}
}

// FuzzValidJSON compares ValidJSON with encoding/json.Valid.
func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("ValidJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON measures both on a tools/call request and on a
// tools/list result of 1,000 tools.
func BenchmarkValidJSON(b *testing.B) {
	var list strings.Builder
	list.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for i := range 1000 {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"name":"tool_%03d","description":"Tool %d.","inputSchema":{"type":"object","properties":{"value":{"type":"number"}}}}`, i, i)
	}
	list.WriteString(`]}}`)
	for _, doc := range []struct {
		name string
		msg  []byte
	}{
		{"call", []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"convert_units","arguments":{"value":10,"from":"km","to":"mi"},"_meta":{"progressToken":"tok-17"}}}`)},
		{"list", []byte(list.String())},
	} {
		b.Run(doc.name+"/ValidJSON", func(b *testing.B) {
			for b.Loop() {
				ValidJSON(doc.msg)
			}
		})
		b.Run(doc.name+"/encoding-json", func(b *testing.B) {
			for b.Loop() {
				json.Valid(doc.msg)
			}
		})
	}
}
