package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// MessageType says what a message on a channel is.
type MessageType string

// The types of message. A tool call of an agent skill publishes a
// chat_message; the agent answers with any number of agent_reply_delta
// messages and then one agent_reply or agent_error, each with InReplyTo
// naming the chat_message. A cancel message tells the agent that the
// caller gave up on the chat_message it names.
const (
	MessageChat       MessageType = "chat_message"
	MessageReplyDelta MessageType = "agent_reply_delta"
	MessageReply      MessageType = "agent_reply"
	MessageError      MessageType = "agent_error"
	MessageCancel     MessageType = "cancel"
)

// Final reports whether a message of type t ends the round trip of the
// chat_message it answers.
func (t MessageType) Final() bool { return t == MessageReply || t == MessageError }

// ToAgent reports whether messages of type t are delivered to the agent's
// workers (rather than posted by them).
func (t MessageType) ToAgent() bool { return t == MessageChat || t == MessageCancel }

// Channel is one conversation between callers and an agent skill's
// workers. Calls in one MCP session share a channel; a context_id names
// one explicitly.
type Channel struct {
	ID      string `json:"id"` // "ch_…", or the caller's context_id
	AgentID string `json:"agent_id"`
	Skill   string `json:"skill"`
	// Owner is the identity (Caller.Identity) that opened the channel;
	// only it may post chat messages to the channel.
	Owner string `json:"owner"`
	// SessionID is the MCP session the channel belongs to, if any.
	SessionID string    `json:"session_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Message is one message on a channel. It is also the envelope agent
// workers receive and post, in this JSON form.
type Message struct {
	ID string `json:"id"` // "msg_…"
	// Seq orders messages: the store assigns increasing numbers, so an
	// inbox stream resumes after the last one its worker saw.
	Seq       int64       `json:"seq"`
	ChannelID string      `json:"channel_id"`
	AgentID   string      `json:"agent_id"`
	Skill     string      `json:"skill"`
	Type      MessageType `json:"type"`
	InReplyTo string      `json:"in_reply_to,omitempty"`
	// Sender is the identity that posted the message: "user:<id>",
	// "agent_key:<id>", or "agent:<agent id>" for a push reply.
	Sender string      `json:"sender"`
	Body   MessageBody `json:"body"`
	// Tool and Arguments say which of the skill's tools a chat_message
	// calls; Tool is the skill's chat tool for a plain message.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Trace, on a chat_message, is the W3C trace context of the gateway's
	// span for the call, so that the worker's own spans join the caller's
	// trace; empty when tracing is off.
	Trace     TraceContext `json:"trace,omitzero"`
	CreatedAt time.Time    `json:"created_at"`
}

// Stamp gives m the time and ID it is stored with when they are unset:
// CreatedAt now, and an ID ordered by it. The time is kept as stores keep
// it, in whole microseconds, UTC, so that m reads as it is stored before
// a store has it.
func (m *Message) Stamp() {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	m.CreatedAt = time.UnixMicro(m.CreatedAt.UnixMicro()).UTC()
	if m.ID == "" {
		m.ID = NewOrderedID("msg_", m.CreatedAt)
	}
}

// MessageBody is a message's content: text, structured parts in MCP's
// content-block shape, structured data, and attachments by file ID.
type MessageBody struct {
	Text        string          `json:"text,omitempty"`
	Parts       []Content       `json:"parts,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	Attachments []Attachment    `json:"attachments,omitempty"`
}

// Attachment is a file sent with a message, by its ID.
type Attachment struct {
	FileID   string `json:"file_id"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size,omitempty"`
	// URL, on an attachment of a tool call, is a signed download URL of
	// its bytes, good for a few minutes.
	URL string `json:"url,omitempty"`
}

// MessageStore keeps channels, their messages and the delivery state of
// messages to agent workers.
type MessageStore interface {
	// CreateChannel stores c. Returns ECONFLICT if its ID exists.
	CreateChannel(ctx context.Context, c *Channel) error
	// FindChannel returns ENOTFOUND if there is no such channel.
	FindChannel(ctx context.Context, id string) (*Channel, error)
	// PostMessage stores m, assigning Seq (and ID and CreatedAt when
	// empty) and setting its AgentID and Skill from its channel. An
	// AgentID set by the caller names the agent the channel must be of.
	// Returns ENOTFOUND if its channel does not exist or is another
	// agent's, and ECONFLICT if its ID exists, or if it is a final reply to
	// a message that has one already.
	PostMessage(ctx context.Context, m *Message) error
	// PostDelivered stores m as PostMessage does and, when m is a message
	// to the workers of the inbox to and no older message of that inbox is
	// claimable, marks it delivered at its CreatedAt (its first attempt)
	// in the same transaction, as a claim would; it reports whether it
	// did. The stream it was posted for then takes it without a claim.
	PostDelivered(ctx context.Context, m *Message, to Inbox) (bool, error)
	// ListMessages returns a channel's messages with Seq > afterSeq, oldest
	// first, at most limit of them.
	ListMessages(ctx context.Context, channelID string, afterSeq int64, limit int) ([]*Message, error)
	// FindMessage returns ENOTFOUND if there is no such message.
	FindMessage(ctx context.Context, id string) (*Message, error)
	// FindReply returns the final reply (agent_reply or agent_error) to a
	// message; ENOTFOUND while there is none.
	FindReply(ctx context.Context, inReplyTo string) (*Message, error)
	// ClaimMessages returns up to limit messages for an agent's workers
	// (chat_message and cancel; of one skill, or of all when skill is "") that are neither acknowledged nor
	// delivered within the last visibility, oldest first, and marks them
	// delivered at now. Redelivered messages keep their ID.
	ClaimMessages(ctx context.Context, agentID, skill string, now time.Time, visibility time.Duration, limit int) ([]*Message, error)
	// RenewMessages keeps the messages a worker's open stream holds: of
	// held (message ID → the delivery time last written for it), those
	// unacknowledged and still delivered at that time are marked delivered
	// at now, restarting their visibility; their IDs are returned. One
	// delivered again since is left to its new holder.
	RenewMessages(ctx context.Context, agentID string, held map[string]time.Time, now time.Time) ([]string, error)
	// ReleaseMessages makes the messages of held that are unacknowledged
	// and still delivered at the time given for them claimable at once:
	// the stream that held them ended, its worker gone before replying.
	ReleaseMessages(ctx context.Context, agentID string, held map[string]time.Time) error
	// AckMessage marks a message to an agent acknowledged, so it is not
	// delivered again. Returns ENOTFOUND if the agent has no such message.
	AckMessage(ctx context.Context, agentID, id string) error
}

// Inbox names the messages one inbox stream takes: those to the workers of
// an agent's skill (of all its skills when Skill is ""), claimable again
// Visibility after each delivery unless renewed.
type Inbox struct {
	AgentID, Skill string
	Visibility     time.Duration
}

// Handoff is an inbox stream's share of the messages posted on its
// replica: once the stream is offered (Idle), a message posted for its
// inbox may be stored delivered to it (MessageStore.PostDelivered) and
// handed over here, saving the stream a claim of its own.
type Handoff interface {
	// Idle offers the stream for the messages posted from now on, until
	// Close; calling it again is harmless.
	Idle()
	// Ready receives a signal when messages were handed over.
	Ready() <-chan struct{}
	// Take returns the messages handed over since the last Take, each
	// delivered at its CreatedAt, once the posts under way for the stream
	// are settled. Every message the stream claimed before calling Take
	// is younger than those, or was claimable when they were posted.
	Take() []*Message
	// Close withdraws the stream: no message is handed over after it. It
	// returns the messages handed over but not taken, delivered to the
	// stream all the same, which the stream must release.
	Close() []*Message
	// Acked returns the IDs of the agent's messages acknowledged on this
	// replica (answered by a final reply, or withdrawn by a cancel) since
	// the last call: the stream need not renew them. Messages acknowledged
	// elsewhere are not among them.
	Acked() []string
}

// ChatToolSchema is the input schema of an agent skill's chat tool.
const ChatToolSchema = `{"type":"object","properties":{` +
	`"message":{"type":"string","description":"What to ask or tell the agent."},` +
	`"context_id":{"type":"string","description":"Continue the conversation with this ID (from an earlier result's _meta); omit to use this session's conversation."},` +
	`"attachments":{"type":"array","description":"Files uploaded through POST /api/v1/files/presign-upload, by ID; the agent gets each with a signed download URL.",` +
	`"items":{"type":"object","required":["file_id"],"properties":{"file_id":{"type":"string"},"filename":{"type":"string"},"content_type":{"type":"string"}}}}},` +
	`"required":["message"],"additionalProperties":false}`

// ChatTool returns the tool through which callers talk to an agent skill's
// workers: named after the skill, described by the agent's card.
func ChatTool(agent *Agent, sk *Skill) *Tool {
	desc := agent.Description
	if desc == "" {
		desc = "Send a message to " + agent.Name + " and get its reply."
	}
	return &Tool{Name: sk.Name, Title: agent.Name, Description: desc, InputSchema: json.RawMessage(ChatToolSchema)}
}
