package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// excerptLimit is how much of an error response's body a result quotes.
const excerptLimit = 1 << 10

// response is a backend's answer, its body read up to the skill's limit.
type response struct {
	status    int
	method    string   // of the request that got this answer, after redirects
	url       *url.URL // of the request that got this answer, after redirects
	target    *url.URL // of the call's request, before redirects
	mediaType string   // lower case, without parameters; sniffed when absent
	body      []byte
	truncated bool   // body is the first limit bytes of a longer one
	read      []byte // what was read of the body: body, and one byte more when truncated
	limit     int64
}

// newResponse describes resp, whose body has been read: read holds up to
// limit+1 bytes, of which the response keeps limit.
func newResponse(resp *http.Response, target *url.URL, read []byte, truncated bool, limit int64) *response {
	body := read
	if int64(len(body)) > limit {
		body = body[:limit]
	}
	r := &response{
		status: resp.StatusCode, method: resp.Request.Method, url: resp.Request.URL, target: target,
		body: body, truncated: truncated, read: read, limit: limit,
	}
	r.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if r.mediaType == "" && len(body) > 0 {
		r.mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	return r
}

// result maps the response to a tool result. Pass the tool's output schema,
// if any, to have a JSON object returned as structured content.
func (r *response) result(outputSchema json.RawMessage) *mcpgate.Result {
	switch {
	case r.status < 200 || r.status > 299:
		return mcpgate.ErrorResult("%s", r.statusError())
	case len(r.body) == 0:
		return textResult(fmt.Sprintf("The request succeeded with HTTP status %d and returned no body.", r.status))
	case isJSON(r.mediaType):
		return r.jsonResult(len(outputSchema) > 0)
	case isText(r.mediaType):
		return textResult(r.text())
	case r.truncated:
		return mcpgate.ErrorResult("The %s response is larger than the skill's limit of %d bytes; raise max_response_bytes to receive it.", r.mediaType, r.limit)
	case strings.HasPrefix(r.mediaType, "image/"):
		return r.binary("image")
	case strings.HasPrefix(r.mediaType, "audio/"):
		return r.binary("audio")
	}
	return r.resource()
}

// textResult returns a result of one text block.
func textResult(s string) *mcpgate.Result {
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(s)}}
}

// jsonResult returns the JSON as text, and as structured content too when
// structured is set, in which case it must be a whole JSON object.
func (r *response) jsonResult(structured bool) *mcpgate.Result {
	res := textResult(r.text())
	switch {
	case !structured:
		return res
	case r.truncated:
		res.IsError = true
		res.Content[0].Text += "\nThe tool's output schema needs the whole response as structured content."
	case !mcpgate.ValidJSON(r.body):
		res.IsError = true
		res.Content[0].Text = "The response is not valid JSON, but the tool's output schema needs a JSON object:\n" + res.Content[0].Text
	case bytes.TrimLeft(r.body, " \t\r\n")[0] != '{':
		res.IsError = true
		res.Content[0].Text = "The response is not a JSON object, as the tool's output schema requires:\n" + res.Content[0].Text
	default:
		res.StructuredContent = json.RawMessage(r.body)
	}
	return res
}

// text returns the body as text, valid UTF-8, with a note when it was cut.
func (r *response) text() string {
	s := r.textPart()
	if r.truncated {
		s += fmt.Sprintf("\n[response truncated: more than %d bytes]", r.limit)
	}
	return s
}

// textPart returns the body as text, valid UTF-8, without a note.
func (r *response) textPart() string {
	return strings.ToValidUTF8(string(trimPartialRune(r.body, r.truncated)), "\uFFFD")
}

// binary returns an image or audio block.
func (r *response) binary(kind string) *mcpgate.Result {
	return &mcpgate.Result{Content: []mcpgate.Content{{
		Type: kind, MimeType: r.mediaType, Data: base64.StdEncoding.EncodeToString(r.body),
	}}}
}

// resource returns the body as an embedded resource named by the request's
// URL without its query.
func (r *response) resource() *mcpgate.Result {
	return &mcpgate.Result{Content: []mcpgate.Content{{
		Type: "resource",
		Resource: &mcpgate.ResourceContents{
			URI: displayURL(r.target), MimeType: r.mediaType, Blob: base64.StdEncoding.EncodeToString(r.body),
		},
	}}}
}

// statusError says which status came from where, with an excerpt of the
// body; never a header, never the query.
func (r *response) statusError() string {
	msg := fmt.Sprintf("HTTP %d", r.status)
	if t := http.StatusText(r.status); t != "" {
		msg += " " + t
	}
	msg += fmt.Sprintf(" from %s %s", r.method, displayURL(r.url))
	switch {
	case len(r.body) == 0:
		return msg
	case !isJSON(r.mediaType) && !isText(r.mediaType) && !utf8.Valid(r.body):
		return fmt.Sprintf("%s\n[%d bytes of %s]", msg, len(r.body), r.mediaType)
	}
	excerpt := r.body
	cut := r.truncated || len(excerpt) > excerptLimit
	if len(excerpt) > excerptLimit {
		excerpt = excerpt[:excerptLimit]
	}
	msg += "\n\n" + strings.ToValidUTF8(string(trimPartialRune(excerpt, cut)), "\uFFFD")
	if cut {
		msg += "…"
	}
	return msg
}

// trimPartialRune drops a UTF-8 sequence cut short at the end of b, when b
// was cut.
func trimPartialRune(b []byte, cut bool) []byte {
	if !cut {
		return b
	}
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// isJSON reports whether a media type is JSON.
func isJSON(mt string) bool {
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// isText reports whether a media type holds text. SVG images count as text:
// clients take raster images only.
func isText(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/x-www-form-urlencoded",
		"application/yaml", "application/x-yaml", "application/toml",
		"application/graphql", "application/sql", "application/csv",
		"application/x-ndjson", "application/jsonl", "application/x-sh":
		return true
	}
	return false
}
