package audit

import (
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// marshalledSize is what resultSize must equal: the length of res as
// json.Marshal writes it.
func marshalledSize(t testing.TB, res *mcpgate.Result) int {
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestResultSize(t *testing.T) {
	results := map[string]*mcpgate.Result{
		"empty":      {},
		"text":       {Content: []mcpgate.Content{mcpgate.TextContent("hi")}},
		"error":      mcpgate.ErrorResult("HTTP 409: <conflict> & \"more\"\n\ttab"),
		"two blocks": {Content: []mcpgate.Content{mcpgate.TextContent("a"), {Type: "image", Data: "AAAA", MimeType: "image/png"}}},
		"link":       {Content: []mcpgate.Content{{Type: "resource_link", URI: "file:///x", Name: "x", MimeType: "text/plain", Size: 1234}}},
		"resource":   {Content: []mcpgate.Content{{Type: "resource", Resource: &mcpgate.ResourceContents{URI: "u", Text: "t\u2028é", Blob: "b"}}}},
		"controls":   {Content: []mcpgate.Content{mcpgate.TextContent("\x00\x01\x1f\b\f\r\x7f")}},
		"bad utf-8":  {Content: []mcpgate.Content{mcpgate.TextContent("a\xffb\xe2\x82")}},
		"structured": {Content: []mcpgate.Content{mcpgate.TextContent("{}")}, StructuredContent: json.RawMessage(`{ "a" : "<b>" }`)},
		"meta":       {Content: []mcpgate.Content{{Type: "text", Text: "x", Meta: json.RawMessage(`{"k":1}`)}}, Meta: json.RawMessage(`{}`)},
		"raw":        {Raw: json.RawMessage(`{"content":[],"isError":false}`)},
	}
	for name, res := range results {
		want := marshalledSize(t, res)
		if name == "raw" {
			want = len(res.Raw)
		}
		if got := resultSize(res); got != want {
			t.Errorf("%s: resultSize = %d, json.Marshal wrote %d bytes", name, got, want)
		}
	}
}

// FuzzResultSize holds resultSize to json.Marshal for content of any text.
func FuzzResultSize(f *testing.F) {
	for _, s := range []string{"", "hi", "<a href=\"x\">&amp;</a>", "\u2028\u2029", "\xff\xfe", "tab\there\\", "日本語"} {
		f.Add(s, s+"x", int64(len(s)), true)
	}
	f.Fuzz(func(t *testing.T, text, other string, size int64, isError bool) {
		res := &mcpgate.Result{IsError: isError, Content: []mcpgate.Content{
			mcpgate.TextContent(text),
			{Type: other, Name: text, URI: other, MimeType: text, Data: other, Size: size},
			{Type: "resource", Resource: &mcpgate.ResourceContents{URI: text, MimeType: other, Text: text, Blob: other}},
		}}
		if got, want := resultSize(res), marshalledSize(t, res); got != want {
			t.Fatalf("resultSize = %d, json.Marshal wrote %d bytes", got, want)
		}
	})
}
