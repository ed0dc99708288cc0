package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"

	"github.com/mcpgate/mcpgate"
)

// ResultFiles keeps responses too big for a result as files of the
// caller's user (files.Results).
type ResultFiles interface {
	// StoreResult streams body into a new file owned by userID and returns
	// a resource_link block to it. ETOOLARGE when body is bigger than the
	// store takes; nothing is kept then.
	StoreResult(ctx context.Context, userID, name, mimeType string, body io.Reader) (mcpgate.Content, error)
}

// spills reports whether a successful response cut at the skill's limit
// is stored whole as a file rather than returned cut. A tool with an
// output schema needs the whole response inline as structured content,
// so its response is not stored.
func (b *Backend) spills(call *mcpgate.Call, r *response) bool {
	return b.results != nil && r.truncated && call.Caller.UserID != "" && r.status >= 200 && r.status <= 299 &&
		len(call.Tool.OutputSchema) == 0
}

// spill stores the whole body, the part already read and the rest of
// resp, as a file of the caller's user, and returns a result of the first
// part as text (a note for binary types) and a resource_link to the file.
// A body over the store's limit gives the cut result as before.
func (b *Backend) spill(ctx context.Context, call *mcpgate.Call, resp *http.Response, r *response) *mcpgate.Result {
	whole := io.MultiReader(bytes.NewReader(r.read), resp.Body)
	link, err := b.results.StoreResult(ctx, call.Caller.UserID, resultName(r), r.storedType(resp), whole)
	if err != nil {
		res := r.result(call.Tool.OutputSchema)
		res.Content[0].Text += fmt.Sprintf("\n[the whole response could not be stored: %s]", mcpgate.ErrorMessage(err))
		return res
	}
	note := fmt.Sprintf("[the response is %d bytes, more than the skill's limit of %d; all of it is the resource %s (resources/read), or at the download URL in its _meta]", link.Size, r.limit, link.URI)
	first := note
	if isJSON(r.mediaType) || isText(r.mediaType) {
		first = r.textPart() + "\n" + note
	}
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(first), link}}
}

// storedType is the stored file's content type: the response's, with its
// parameters, or the sniffed media type.
func (r *response) storedType(resp *http.Response) string {
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		return ct
	}
	if r.mediaType != "" {
		return r.mediaType
	}
	return "application/octet-stream"
}

// resultName names a stored response after the last segment of the
// request's path.
func resultName(r *response) string {
	name := path.Base(r.target.Path)
	if name == "/" || name == "." || name == "" {
		name = "response"
	}
	return name
}
