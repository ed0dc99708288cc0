package agentkit

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// Reply is what a handler answers: text, content blocks, structured data
// and attachments. The gateway turns Parts (or Text when there are no
// parts) into the tool result's content and Data into its
// structuredContent.
type Reply struct {
	Text        string
	Parts       []mcpgate.Content
	Data        any
	Attachments []mcpgate.Attachment
}

// Text returns a reply of one text.
func Text(text string) *Reply { return &Reply{Text: text} }

// Textf returns a reply of one formatted text.
func Textf(format string, args ...any) *Reply { return &Reply{Text: fmt.Sprintf(format, args...)} }

// body encodes the reply as a message body.
func (r *Reply) body() (mcpgate.MessageBody, error) {
	b := mcpgate.MessageBody{Text: r.Text, Parts: r.Parts, Attachments: r.Attachments}
	if r.Data == nil {
		return b, nil
	}
	if raw, ok := r.Data.(json.RawMessage); ok {
		b.Data = raw
		return b, nil
	}
	data, err := json.Marshal(r.Data)
	if err != nil {
		return b, fmt.Errorf("agentkit: encode reply data: %w", err)
	}
	b.Data = data
	return b, nil
}

// outgoing is a message a worker posts: the body of POST
// /api/v1/channels/{id}/messages, and of a push response.
type outgoing struct {
	Type      mcpgate.MessageType `json:"type"`
	InReplyTo string              `json:"in_reply_to,omitempty"`
	Body      mcpgate.MessageBody `json:"body"`
}
