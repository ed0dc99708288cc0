package mcpgate

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshalResultReflect is Result.MarshalJSON as it was written with
// encoding/json's reflection, the reference the hand encoder must match.
func marshalResultReflect(r *Result) ([]byte, error) {
	type plain Result
	p := plain(*r)
	if p.Content == nil {
		p.Content = []Content{}
	}
	return json.Marshal(&p)
}

// FuzzResultMarshalJSON checks that Result.MarshalJSON writes exactly the
// bytes encoding/json writes for the same result, and fails where it
// fails (a raw member that is not JSON).
func FuzzResultMarshalJSON(f *testing.F) {
	f.Add("plain text", []byte(`{"a":1}`), []byte(nil), false, "")
	f.Add("", []byte(nil), []byte(`{"conversation":"c"}`), true, "image")
	f.Add("<a & b>\u2028\u2029\x00\x1f\b\f\n\r\t\"\\\x7f é \xff", []byte(` { "x" : "<&>\u2028" , "y":[1, 2.5e3, null] } `), []byte(`"m"`), true, "resource_link")
	f.Add("x", []byte(`{bad`), []byte(nil), false, "")
	f.Add("x", []byte(nil), []byte(`[1,`), false, "")
	f.Add("x", []byte(`  `), []byte(nil), false, "text")
	f.Fuzz(func(t *testing.T, text string, structured, meta []byte, isError bool, second string) {
		r := &Result{Content: []Content{TextContent(text)}, StructuredContent: structured, Meta: meta, IsError: isError}
		if second != "" {
			r.Content = append(r.Content, Content{Type: second, Text: text, Data: "ZGF0YQ==", URI: "file:///" + text, Size: int64(len(text)),
				Resource: &ResourceContents{URI: "u", Text: text}, Meta: json.RawMessage(`{"k":"<v>"}`)})
		}
		want, wantErr := marshalResultReflect(r)
		got, err := r.MarshalJSON()
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("MarshalJSON error = %v, encoding/json's = %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("MarshalJSON =\n%s\nencoding/json writes\n%s", got, want)
		}
	})
}

// TestResultMarshalJSONNoContent checks the empty result: content is an
// empty array, never null.
func TestResultMarshalJSONNoContent(t *testing.T) {
	got, err := (&Result{}).MarshalJSON()
	if err != nil || string(got) != `{"content":[]}` {
		t.Errorf("MarshalJSON = %s, %v; want {\"content\":[]}", got, err)
	}
}

// TestResultMarshalJSONAllocs checks that a text result is written with
// one allocation, its buffer (encoding/json's reflection took four).
func TestResultMarshalJSONAllocs(t *testing.T) {
	r := &Result{Content: []Content{TextContent(`{"value":6.21,"unit":"mi"}`)}, StructuredContent: json.RawMessage(`{"value":6.21,"unit":"mi"}`)}
	if n := testing.AllocsPerRun(100, func() { r.MarshalJSON() }); n > 1 {
		t.Errorf("MarshalJSON of a text result: %v allocations, want 1", n)
	}
}

func BenchmarkResultMarshalJSON(b *testing.B) {
	r := &Result{Content: []Content{TextContent(`{"value":6.21,"unit":"mi"}`)}, StructuredContent: json.RawMessage(`{"value":6.21,"unit":"mi"}`)}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.MarshalJSON()
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshalResultReflect(r)
		}
	})
}
