package agentkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpgate/mcpgate"
)

// HandlerFunc answers one chat message. It replies with req.Reply or
// req.Fail; returning an error without having replied answers with an
// agent_error carrying the error's text. Returning nil without a reply
// only acknowledges the message: the call then waits for a reply posted
// later (req stays usable) until the skill's timeout. ctx is cancelled
// when the caller gives up on the call or the worker stops; a reply after
// that is not needed.
type HandlerFunc func(ctx context.Context, req *Request) error

// ErrReplied is returned by Reply and Fail after the request has its
// final answer.
var ErrReplied = errors.New("agentkit: the request has been answered already")

// Request is one chat message to the agent: a call of the skill's chat
// tool (the caller's text) or of a tool the agent declares (a tool name
// and its arguments).
type Request struct {
	// Message is the envelope as the gateway delivered it.
	Message *mcpgate.Message
	// ChannelID names the conversation; calls in one MCP session, or with
	// one context_id, share it.
	ChannelID string
	// Tool is the name of the tool called: the skill's chat tool for a
	// plain message, else a tool the agent declares.
	Tool string
	// Arguments are the tool call's arguments as the caller sent them.
	Arguments json.RawMessage

	api    *client
	ctx    context.Context                        // the handler's, for Delta
	finish func(context.Context, *outgoing) error // sends the final answer

	mu      sync.Mutex
	replied bool
}

// newRequest wraps an envelope; finish sends the final answer.
func newRequest(ctx context.Context, m *mcpgate.Message, api *client, finish func(context.Context, *outgoing) error) *Request {
	return &Request{Message: m, ChannelID: m.ChannelID, Tool: m.Tool, Arguments: m.Arguments, api: api, ctx: ctx, finish: finish}
}

// ID returns the chat message's ID, which replies name in in_reply_to.
func (r *Request) ID() string { return r.Message.ID }

// Trace returns the W3C trace context of the gateway's span for the call
// (empty when the gateway does not trace). It is an OpenTelemetry
// TextMapCarrier, so a worker's spans join the caller's trace with
//
//	ctx = propagation.TraceContext{}.Extract(ctx, req.Trace())
func (r *Request) Trace() *mcpgate.TraceContext { return &r.Message.Trace }

// Text returns what the caller said: the message's text, or the "message"
// argument of the chat tool when the text is empty.
func (r *Request) Text() string { return MessageText(r.Message) }

// MessageText returns what the caller said in a chat message, such as one
// of Request.History: its text, or the "message" argument of the chat tool
// when the text is empty.
func MessageText(m *mcpgate.Message) string {
	if m.Body.Text != "" {
		return m.Body.Text
	}
	var args struct {
		Message string `json:"message"`
	}
	json.Unmarshal(m.Arguments, &args)
	return args.Message
}

// Bind decodes the call's arguments into v.
func (r *Request) Bind(v any) error {
	if len(r.Arguments) == 0 {
		return fmt.Errorf("agentkit: the call of %q has no arguments", r.Tool)
	}
	if err := json.Unmarshal(r.Arguments, v); err != nil {
		return fmt.Errorf("agentkit: arguments of %q: %w", r.Tool, err)
	}
	return nil
}

// Delta streams a piece of the answer ahead of the reply; the gateway
// passes it to the caller as a progress notification. It needs
// Options.URL, even for pushed requests.
func (r *Request) Delta(text string) error {
	if r.Replied() {
		return ErrReplied
	}
	err := r.api.post(r.ctx, r.ChannelID, &outgoing{Type: mcpgate.MessageReplyDelta, InReplyTo: r.ID(), Body: mcpgate.MessageBody{Text: text}})
	return err
}

// Reply sends the final answer, which becomes the tool result.
func (r *Request) Reply(ctx context.Context, rep *Reply) error {
	body, err := rep.body()
	if err != nil {
		return err
	}
	return r.send(ctx, &outgoing{Type: mcpgate.MessageReply, InReplyTo: r.ID(), Body: body})
}

// Fail answers with an agent_error: the tool result says text and has
// isError set.
func (r *Request) Fail(ctx context.Context, text string) error {
	return r.send(ctx, &outgoing{Type: mcpgate.MessageError, InReplyTo: r.ID(), Body: mcpgate.MessageBody{Text: text}})
}

// Replied reports whether the request has its final answer.
func (r *Request) Replied() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replied
}

// send sends a final answer once.
func (r *Request) send(ctx context.Context, m *outgoing) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replied {
		return ErrReplied
	}
	if err := r.finish(ctx, m); err != nil {
		return err
	}
	r.replied = true
	return nil
}

// historyPage is how many messages History asks for at a time.
const historyPage = 100

// History returns the channel's messages before this one, oldest first:
// earlier questions, deltas and answers. It needs Options.URL.
func (r *Request) History(ctx context.Context) ([]*mcpgate.Message, error) {
	var all []*mcpgate.Message
	var after int64
	for {
		page, err := r.api.list(ctx, r.ChannelID, after, historyPage)
		if err != nil {
			return nil, err
		}
		for _, m := range page {
			if m.ID == r.ID() || (r.Message.Seq > 0 && m.Seq >= r.Message.Seq) {
				return all, nil
			}
			all = append(all, m)
		}
		if len(page) < historyPage {
			return all, nil
		}
		after = page[len(page)-1].Seq
	}
}
