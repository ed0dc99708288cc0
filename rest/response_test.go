package rest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// answer returns a handler that answers with a status, content type and
// body.
func answer(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing by the server
		}
		w.Header().Set("X-Secret-Header", "never shown")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func TestCallToolResponse(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	big := strings.Repeat("é", 700) // 1400 bytes
	text := func(s string) []mcpgate.Content { return []mcpgate.Content{mcpgate.TextContent(s)} }
	const schema = `{"type":"object"}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		schema  string
		limit   int64
		want    *mcpgate.Result
	}{
		{"json", answer(200, "application/json; charset=utf-8", `{"a": 1}`), "", 0,
			&mcpgate.Result{Content: text(`{"a": 1}`)}},
		{"json with schema", answer(200, "application/json", `{"a": 1}`), schema, 0,
			&mcpgate.Result{Content: text(`{"a": 1}`), StructuredContent: json.RawMessage(`{"a": 1}`)}},
		{"problem json with schema", answer(201, "application/problem+json", ` {"a":[1]}`), schema, 0,
			&mcpgate.Result{Content: text(` {"a":[1]}`), StructuredContent: json.RawMessage(` {"a":[1]}`)}},
		{"json array with schema", answer(200, "application/json", `[1, 2]`), schema, 0,
			&mcpgate.Result{IsError: true, Content: text("The response is not a JSON object, as the tool's output schema requires:\n[1, 2]")}},
		{"invalid json with schema", answer(200, "application/json", `{"a":`), schema, 0,
			&mcpgate.Result{IsError: true, Content: text("The response is not valid JSON, but the tool's output schema needs a JSON object:\n{\"a\":")}},
		{"invalid json without schema", answer(200, "application/json", `{"a":`), "", 0,
			&mcpgate.Result{Content: text(`{"a":`)}},
		{"json truncated", answer(200, "application/json", `{"a": "0123456789"}`), "", 8,
			&mcpgate.Result{Content: text("{\"a\": \"0\n[response truncated: more than 8 bytes]")}},
		{"json truncated with schema", answer(200, "application/json", `{"a": "0123456789"}`), schema, 8,
			&mcpgate.Result{IsError: true, Content: text("{\"a\": \"0\n[response truncated: more than 8 bytes]\nThe tool's output schema needs the whole response as structured content.")}},
		{"exactly at the limit", answer(200, "text/plain", "12345678"), "", 8,
			&mcpgate.Result{Content: text("12345678")}},
		{"text", answer(200, "text/plain; charset=utf-8", "hello"), "", 0,
			&mcpgate.Result{Content: text("hello")}},
		{"html", answer(200, "text/html", "<p>hi</p>"), schema, 0,
			&mcpgate.Result{Content: text("<p>hi</p>")}},
		{"xml", answer(200, "application/atom+xml", "<feed/>"), "", 0,
			&mcpgate.Result{Content: text("<feed/>")}},
		{"javascript", answer(200, "application/javascript", "f()"), "", 0,
			&mcpgate.Result{Content: text("f()")}},
		{"text truncated mid-rune", answer(200, "text/plain", "aéb"), "", 2,
			&mcpgate.Result{Content: text("a\n[response truncated: more than 2 bytes]")}},
		{"invalid utf-8 text", answer(200, "text/plain", "a\xffb"), "", 0,
			&mcpgate.Result{Content: text("a\uFFFDb")}},
		{"no content type, text", answer(200, "", "plain words"), "", 0,
			&mcpgate.Result{Content: text("plain words")}},
		{"image", answer(200, "image/png", png), "", 0,
			&mcpgate.Result{Content: []mcpgate.Content{{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte(png))}}}},
		{"no content type, image sniffed", answer(200, "", png), "", 0,
			&mcpgate.Result{Content: []mcpgate.Content{{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte(png))}}}},
		{"svg is text", answer(200, "image/svg+xml", "<svg/>"), "", 0,
			&mcpgate.Result{Content: text("<svg/>")}},
		{"audio", answer(200, "audio/wav", "RIFF"), "", 0,
			&mcpgate.Result{Content: []mcpgate.Content{{Type: "audio", MimeType: "audio/wav", Data: base64.StdEncoding.EncodeToString([]byte("RIFF"))}}}},
		{"binary", answer(200, "application/pdf", "%PDF-1.7\x00\x01"), "", 0,
			&mcpgate.Result{Content: []mcpgate.Content{{Type: "resource", Resource: &mcpgate.ResourceContents{
				URI: "{{URL}}/files/report.pdf", MimeType: "application/pdf", Blob: base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\x00\x01"))}}}}},
		{"binary over the limit", answer(200, "image/png", png), "", 4,
			&mcpgate.Result{IsError: true, Content: text("The image/png response is larger than the skill's limit of 4 bytes; raise max_response_bytes to receive it.")}},
		{"no body", answer(204, "", ""), schema, 0,
			&mcpgate.Result{Content: text("The request succeeded with HTTP status 204 and returned no body.")}},
		{"empty 200", answer(200, "application/json", ""), "", 0,
			&mcpgate.Result{Content: text("The request succeeded with HTTP status 200 and returned no body.")}},
		{"404", answer(404, "application/json", `{"error":"no such file"}`), schema, 0,
			&mcpgate.Result{IsError: true, Content: text("HTTP 404 Not Found from GET {{URL}}/files/report.pdf\n\n{\"error\":\"no such file\"}")}},
		{"500 without body", answer(500, "", ""), "", 0,
			&mcpgate.Result{IsError: true, Content: text("HTTP 500 Internal Server Error from GET {{URL}}/files/report.pdf")}},
		{"unknown status", answer(599, "text/plain", "odd"), "", 0,
			&mcpgate.Result{IsError: true, Content: text("HTTP 599 from GET {{URL}}/files/report.pdf\n\nodd")}},
		{"error excerpt cut at 1 KiB", answer(502, "text/html", big), "", 0,
			&mcpgate.Result{IsError: true, Content: text("HTTP 502 Bad Gateway from GET {{URL}}/files/report.pdf\n\n" + strings.Repeat("é", 512) + "…")}},
		{"error with binary body", answer(403, "application/octet-stream", "\x00\x01\xff"), "", 0,
			&mcpgate.Result{IsError: true, Content: text("HTTP 403 Forbidden from GET {{URL}}/files/report.pdf\n[3 bytes of application/octet-stream]")}},
	}
	b := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mustServe(t, tt.handler)
			call := newCall(srv.URL, &mcpgate.Request{Path: "/files/{name}", Query: map[string]string{"key": "secret"}}, `{"name": "report.pdf"}`)
			call.Tool.OutputSchema = json.RawMessage(tt.schema)
			call.Skill.MaxResponseBytes = tt.limit
			res := mustCall(t, b, call)
			want := withURL(tt.want, srv.URL)
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if strings.Contains(resultText(res), "secret") {
				t.Errorf("the result shows the query or a header: %s", resultText(res))
			}
		})
	}
}

// withURL replaces {{URL}} in a result's texts and URIs with url.
func withURL(res *mcpgate.Result, url string) *mcpgate.Result {
	out := *res
	out.Content = nil
	for _, c := range res.Content {
		c.Text = strings.ReplaceAll(c.Text, "{{URL}}", url)
		if c.Resource != nil {
			r := *c.Resource
			r.URI = strings.ReplaceAll(r.URI, "{{URL}}", url)
			c.Resource = &r
		}
		out.Content = append(out.Content, c)
	}
	return &out
}
