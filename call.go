package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
)

// Call is one tools/call on its way through the pipeline.
type Call struct {
	Agent *Agent
	Skill *Skill
	Tool  *Tool
	// ToolName is the tool's name as the agent serves it.
	ToolName  string
	Arguments json.RawMessage
	// Decoded is Arguments as the pipeline's validate stage decoded them
	// (objects as map[string]any, numbers as json.Number); nil before that
	// stage, and after a later one changes Arguments (an approval signs the
	// attachments' URLs anew). Backends may read it instead of decoding
	// Arguments again but must not change it: it is shared with the audit
	// log, its last reader.
	Decoded any
	// Caller is who makes the call; the edge sets it. The credential
	// itself never travels with a call.
	Caller    Caller
	SessionID string
	// Attachments are the files of arguments.attachments, checked and
	// given signed download URLs (Attachment.URL) by the pipeline.
	Attachments []Attachment
	// Trace is the W3C trace context of the call's backend span, which
	// backends pass on (REST headers, MCP headers and _meta, the agent's
	// chat_message); empty when tracing is off.
	Trace TraceContext
	// Notifier reaches the caller while the call runs; never nil.
	Notifier Notifier
	// Client sends server→client requests to the caller while the call
	// runs; nil when the transport cannot (HandsAI, the CLI).
	Client ClientRequester
}

// Notifier sends notifications to the MCP client about one call in flight.
// Implementations drop what the client did not ask for (progress without a
// progress token, messages below the session's log level).
type Notifier interface {
	// Progress reports progress so far, out of total when total > 0.
	Progress(progress, total float64, message string)
	// Log sends a notifications/message at the given level.
	Log(level, logger string, data any)
}

// ProgressWanter is a Notifier that can tell whether it passes progress
// on at all. A backend that has to ask its own server for progress (an
// upstream MCP server, by sending a progress token) asks only when the
// call's Notifier wants it: the server then neither tracks nor sends what
// nobody reads.
type ProgressWanter interface {
	// WantsProgress reports whether Progress may pass progress on; it
	// does not change during the call.
	WantsProgress() bool
}

// WantsProgress reports whether n may pass progress on: what its
// WantsProgress method says when it has one, and true otherwise.
func WantsProgress(n Notifier) bool {
	if w, ok := n.(ProgressWanter); ok {
		return w.WantsProgress()
	}
	return true
}

// Deferrer is a Notifier that can run work once the call's reply has gone
// out to the client: the MCP endpoint's reply to a POST, which its
// handler writes and flushes before it runs what was deferred. The
// pipeline hands it what no reply waits for (the call's record: its
// metrics, its audit record, its event), so that the client does not wait
// for them either.
type Deferrer interface {
	// Defer arranges for f to run, on the goroutine that wrote the
	// reply, after the reply went out, and reports whether it will; false
	// (a reply that cannot run deferred work, or whose work already ran)
	// leaves f to the caller.
	Defer(f func()) bool
}

// AfterReply runs f once the call's reply went out when n is a Deferrer
// that takes it, and before it returns otherwise: for work the reply does
// not wait for.
func AfterReply(n Notifier, f func()) {
	if d, ok := n.(Deferrer); ok && d.Defer(f) {
		return
	}
	f()
}

// NopNotifier drops every notification.
type NopNotifier struct{}

// Progress does nothing.
func (NopNotifier) Progress(float64, float64, string) {}

// WantsProgress reports false: progress is dropped.
func (NopNotifier) WantsProgress() bool { return false }

// Log does nothing.
func (NopNotifier) Log(string, string, any) {}

// Backend executes tool calls for the tools of one kind of skill.
type Backend interface {
	// CallTool runs the call. A failure the tool's caller should see (the
	// backend said no, timed out, answered garbage) is a Result with
	// IsError; an error is returned only for conditions of the gateway
	// itself, with a code (ETIMEOUT, EUNAVAILABLE, ...). CallTool must
	// return promptly once ctx is done: the pipeline's deadline and the
	// caller's cancellation reach the backend only through ctx.
	CallTool(ctx context.Context, call *Call) (*Result, error)
}

// Result is the outcome of a tools/call, in MCP's CallToolResult shape.
type Result struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	// Meta is the result's _meta: data for the client beside the content,
	// such as the conversation an agent's reply continues.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Raw, when set, is a relayed CallToolResult sent exactly as received;
	// the other fields are then ignored.
	Raw json.RawMessage `json:"-"`
	// Invalid, when set, says why the arguments were refused before any
	// backend ran (an EINVALID naming each bad field); the result then
	// carries the same text. Surfaces other than MCP, which must report
	// invalid arguments differently from tool failures, read it.
	Invalid error `json:"-"`
	// Failure, when set on a result with IsError, says that the backend
	// could not serve the call at all: ETIMEOUT when it did not answer in
	// time, EUNAVAILABLE when it could not be reached. The client reads the
	// result as any tool failure; the audit log records the outcome as a
	// timeout or unavailable, and an idempotency key is released rather
	// than kept, so that a retry runs.
	Failure string `json:"-"`
}

// MarshalJSON writes Raw when set, else the result's fields, as
// encoding/json would write them.
func (r *Result) MarshalJSON() ([]byte, error) {
	if len(r.Raw) > 0 {
		return r.Raw, nil
	}
	return r.appendJSON(make([]byte, 0, r.sizeHint()))
}

// AppendJSON appends to b the JSON MarshalJSON returns, so that a caller
// that only measures it (the audit log's writer) can reuse one buffer.
func (r *Result) AppendJSON(b []byte) ([]byte, error) {
	if len(r.Raw) > 0 {
		return append(b, r.Raw...), nil
	}
	return r.appendJSON(b)
}

// sizeHint is about the length of the result's JSON, so that it is
// written into one buffer.
func (r *Result) sizeHint() int {
	n := 64 + len(r.StructuredContent) + len(r.Meta)
	for i := range r.Content {
		n += 32 + len(r.Content[i].Text) + len(r.Content[i].Data)
	}
	return n
}

// ErrorResult returns a result with IsError set and one text block.
func ErrorResult(format string, args ...any) *Result {
	return &Result{IsError: true, Content: []Content{TextContent(fmt.Sprintf(format, args...))}}
}

// Content is one block of a result: text, image, audio, an embedded
// resource, or a resource_link (URI, Name, MimeType, Size).
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	Size     int64             `json:"size,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// MarshalJSON keeps "text" on text blocks even when empty.
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content
	if c.Type == "text" {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	}
	return json.Marshal(plain(c))
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ResourceContents is the body of an embedded resource: text or a base64
// blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}
