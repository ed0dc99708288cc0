package upstream

import (
	"encoding/json"
	"reflect"
	"testing"
)

var capsSeeds = []string{
	``, `{}`, ` { } `, `null`, `{"sampling":{}}`, `{"roots":{"listChanged":true}}`,
	`{"elicitation":{"form":{}}}`, `{"\u0073ampling":{}}`, `{"experimental":{"x":"roots"}}`,
	`{"experimental":{"sampling":{}}}`, `{"sampling":null}`, `{"roots":true}`, `{"roots":`,
	`{"tasks":{"list":{}},"sampling":{"tools":{}}}`, `{"sAmpling":{}}`, `{"\u017fampling":{}}`, `{"ſampling":{}}`, `{"ROOTS":{}}`,
}

// hostCaps keeps what a full decode keeps, whatever the host declared.
func TestHostCapsAsDecoded(t *testing.T) {
	for _, s := range capsSeeds {
		if got, want := hostCaps(json.RawMessage(s)), decodeHostCaps(json.RawMessage(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("hostCaps(%s) = %+v, want %+v", s, got, want)
		}
	}
}

// What the gateway relays of a host's declarations: its own objects, in
// names matched as encoding/json matches them; nothing else.
func TestHostCaps(t *testing.T) {
	tests := []struct{ caps, want string }{
		{`{}`, `{}`},
		{`{"experimental":{"sampling":{}}}`, `{}`},
		{`{"sampling":{"tools":{}},"tasks":{}}`, `{"sampling":{"tools":{}}}`},
		{`{"sAmpling":{}}`, `{"sampling":{}}`},
		{`{"roots":{"listChanged":true},"elicitation":{}}`, `{"roots":{},"elicitation":{}}`},
	}
	for _, tt := range tests {
		if got := string(hostCaps(json.RawMessage(tt.caps)).raw()); got != tt.want {
			t.Errorf("hostCaps(%s) = %s, want %s", tt.caps, got, tt.want)
		}
	}
}

// Capabilities that name nothing the gateway relays are not decoded.
func TestHostCapsOfNoneAllocatesNothing(t *testing.T) {
	caps := json.RawMessage(`{"experimental":{},"tasks":{}}`)
	if n := testing.AllocsPerRun(100, func() { hostCaps(caps) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func FuzzHostCaps(f *testing.F) {
	for _, s := range capsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hostCaps(json.RawMessage(s)), decodeHostCaps(json.RawMessage(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("hostCaps(%q) = %+v, want %+v", s, got, want)
		}
	})
}
