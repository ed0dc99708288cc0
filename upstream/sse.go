package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream may end the event stream of a POST before it has answered:
// it lost the connection, or it closed the stream on purpose and expects
// the client to come back (SEP-1699, "polling"). Either way the answer is
// not lost if the upstream keeps its events: the client resumes with a GET
// carrying the last event id it saw. The SDK's own resumption gives up
// after a few reconnections without new events and then fails the whole
// session, so the gateway resumes a POST's stream itself, under the SDK:
// the SDK reads one unbroken stream, with the event ids taken out so that
// it never tries on its own.
const (
	// resumeDelay is the wait before reconnecting when the upstream did
	// not advise one with retry.
	resumeDelay = time.Second
	// resumeMaxDelay caps both the advised delay and the backoff.
	resumeMaxDelay = 30 * time.Second
	// resumeTries is how many reconnections in a row may fail before the
	// request fails. A reconnection that the upstream accepts resets it.
	resumeTries = 3
)

// sseBody reads an upstream's event stream for the SDK. It offers each
// complete event to the capture (if any) before the SDK sees the bytes
// that complete it, passes every line but the id field, and, for a POST's
// stream, resumes the stream when it ends before the answer.
type sseBody struct {
	body io.ReadCloser
	c    *capture // nil when the request has none
	// resume reconnects with a GET after the given event id; nil for a
	// stream that the SDK resumes itself (its GET stream).
	resume func(ctx context.Context, lastID string) (io.ReadCloser, error)
	ctx    context.Context

	chunk    []byte
	out      []byte // lines ready for the SDK
	line     []byte
	event    []byte
	lastID   string
	retry    time.Duration
	answered bool // a response went by: the stream has nothing more to give
	err      error
}

// newSSEBody wraps the event stream body of a response.
func newSSEBody(ctx context.Context, body io.ReadCloser, c *capture) *sseBody {
	return &sseBody{body: body, c: c, ctx: ctx}
}

// Read reads the stream, resuming it if it ends too early.
func (b *sseBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// Close closes the current connection's body.
func (b *sseBody) Close() error { return b.body.Close() }

// fill reads once from the connection and splits what came into lines;
// at the end of the connection it resumes the stream or records the end.
func (b *sseBody) fill() {
	if b.chunk == nil {
		b.chunk = make([]byte, 4096)
	}
	n, err := b.body.Read(b.chunk)
	for _, ch := range b.chunk[:n] {
		if ch != '\n' {
			b.line = append(b.line, ch)
			continue
		}
		b.endLine()
	}
	if len(b.line)+len(b.event) > sdk.DefaultMaxEventSize {
		b.err = fmt.Errorf("an event of the upstream's stream exceeds %d bytes", sdk.DefaultMaxEventSize)
		if b.c != nil {
			b.c.lose(b.err)
		}
		return
	}
	if err == nil {
		return
	}
	if errors.Is(err, io.EOF) {
		err = io.EOF
	}
	if next := b.reconnect(err); next != nil {
		_ = b.body.Close()
		b.body = next
		b.line, b.event = b.line[:0], b.event[:0] // an incomplete event is dropped
		return
	}
	b.err = err
}

// endLine handles one complete line of the stream: it keeps the event's
// data, id and retry, offers the event when the blank line ends it, and
// queues the line for the SDK unless it is the id field.
func (b *sseBody) endLine() {
	line := bytes.TrimSuffix(b.line, []byte("\r"))
	name, value := sseField(line)
	switch name {
	case "":
		if len(b.event) > 0 {
			b.offer(b.event)
			b.event = b.event[:0]
		}
	case "data":
		if len(b.event) > 0 {
			b.event = append(b.event, '\n')
		}
		b.event = append(b.event, value...)
	case "retry":
		if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 {
			b.retry = time.Duration(ms) * time.Millisecond
		}
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			b.lastID = string(value)
		}
	}
	if name != "id" {
		b.out = append(b.out, line...)
		b.out = append(b.out, '\n')
	}
	b.line = b.line[:0]
}

// sseField splits a line into its field name and value; a blank line has
// no name, a comment the name ":".
func sseField(line []byte) (name string, value []byte) {
	if len(line) == 0 {
		return "", nil
	}
	if line[0] == ':' {
		return ":", nil
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	return string(field), bytes.TrimPrefix(value, []byte(" "))
}

// offer passes one event's data on to the capture, noting a response.
func (b *sseBody) offer(data []byte) {
	var m wireMessage
	if json.Unmarshal(data, &m) != nil {
		return
	}
	if m.isResponse() {
		b.answered = true
	}
	if b.c != nil {
		offerMessage(b.c, &m)
	}
}

// reconnect resumes a POST's stream that ended with err before the
// answer, and returns the new connection's body; nil when the stream
// cannot or need not be resumed, or resuming failed (the capture is told
// why). An upstream that ended the stream cleanly did it on purpose: the
// call's own client is told to come back later too.
func (b *sseBody) reconnect(err error) io.ReadCloser {
	if b.resume == nil || b.answered || b.lastID == "" || b.ctx.Err() != nil {
		return nil
	}
	if err == io.EOF && b.c != nil {
		b.c.paused(b.retry)
	}
	delay := min(b.retry, resumeMaxDelay)
	if delay == 0 {
		delay = resumeDelay
	}
	var last error
	for range resumeTries {
		if !mcpgate.Sleep(b.ctx, delay) {
			return nil
		}
		body, rerr := b.resume(b.ctx, b.lastID)
		if rerr == nil {
			return body
		}
		last = rerr
		var final *resumeRefused
		if errors.As(rerr, &final) && !final.transient() {
			break
		}
		delay = min(2*delay, resumeMaxDelay)
	}
	if b.c != nil && b.ctx.Err() == nil {
		b.c.lose(fmt.Errorf("the upstream ended its reply stream before answering, and resuming it failed: %w", last))
	}
	return nil
}

// resumeRefused is an upstream's refusal of a resumption GET.
type resumeRefused struct {
	status int
	text   string
}

func (e *resumeRefused) Error() string {
	if e.text == "" {
		return "HTTP " + strconv.Itoa(e.status)
	}
	return "HTTP " + strconv.Itoa(e.status) + ": " + e.text
}

// transient reports whether trying again may help.
func (e *resumeRefused) transient() bool {
	switch e.status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// resumer returns the function that resumes the stream of post, a request
// as it went out (skill headers included), through rt.
func resumer(rt http.RoundTripper, post *http.Request) func(ctx context.Context, lastID string) (io.ReadCloser, error) {
	return func(ctx context.Context, lastID string) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, post.URL.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header = post.Header.Clone()
		req.Header.Del("Content-Type")
		req.Header.Del("Content-Length")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode/100 == 2 && mt == "text/event-stream" {
			return resp.Body, nil
		}
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		_ = resp.Body.Close()
		return nil, &resumeRefused{status: resp.StatusCode, text: string(bytes.TrimSpace(text))}
	}
}
