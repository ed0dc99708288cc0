package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"

	"github.com/mcpgate/mcpgate"
)

// contextIDPattern keeps a caller's context_id usable as a channel ID in
// URLs and logs.
var contextIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// chatArgs are the arguments of an agent skill's chat tool.
type chatArgs struct {
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
}

// isChat reports whether the call is of the skill's chat tool, which is
// named after the skill, rather than of a tool the agent declares.
func isChat(call *mcpgate.Call) bool { return call.Tool.Name == call.Skill.Name }

// chatArguments decodes the chat tool's arguments; EINVALID if they do not
// decode.
func chatArguments(call *mcpgate.Call) (chatArgs, error) {
	var a chatArgs
	if len(call.Arguments) == 0 {
		return a, nil
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return a, mcpgate.Errorf(mcpgate.EINVALID, "the arguments of %s must be an object with a string message", call.Tool.Name)
	}
	return a, nil
}

// channel returns the channel the call talks on: the one contextID (the
// chat tool's context_id, "" for none) names, else its session's (from
// the cache after the session's first call), else a new one. It returns EFORBIDDEN for a context_id of another caller, agent
// or skill and EINVALID for a malformed one.
func (b *Backend) channel(ctx context.Context, call *mcpgate.Call, contextID string) (*mcpgate.Channel, error) {
	want := &mcpgate.Channel{
		AgentID: call.Agent.ID, Skill: call.Skill.Name,
		Owner: call.Caller.Identity, SessionID: call.SessionID,
	}
	if contextID != "" {
		if !contextIDPattern.MatchString(contextID) {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "context_id %q: use up to 128 letters, digits, '_', '.', ':' or '-'", contextID)
		}
		want.ID = contextID
		return b.openChannel(ctx, want)
	}
	if call.SessionID == "" {
		want.ID = "ch_" + randomHex(12)
		return want, b.opts.Channels.CreateChannel(ctx, want)
	}
	want.ID = sessionChannelID(call)
	if ch := b.channels.find(want.ID); ch != nil {
		return ch, checkChannel(ch, want)
	}
	ch, err := b.openChannel(ctx, want)
	if err == nil {
		b.channels.keep(ch)
	}
	return ch, err
}

// openChannel returns the stored channel with want's ID, creating it when
// there is none. A stored channel must match want's agent, skill and owner.
func (b *Backend) openChannel(ctx context.Context, want *mcpgate.Channel) (*mcpgate.Channel, error) {
	for range 2 { // a concurrent call may create it between find and create
		ch, err := b.opts.Channels.FindChannel(ctx, want.ID)
		if err == nil {
			return ch, checkChannel(ch, want)
		} else if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			return nil, err
		}
		err = b.opts.Channels.CreateChannel(ctx, want)
		if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
			return want, err
		}
	}
	return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "channel %q could not be opened; try again", want.ID)
}

// checkChannel returns EFORBIDDEN unless the stored channel belongs to the
// same caller, agent and skill as the call.
func checkChannel(ch, want *mcpgate.Channel) error {
	if ch.Owner != want.Owner || ch.AgentID != want.AgentID || ch.Skill != want.Skill {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "context_id %q belongs to another conversation (another caller, agent or skill); omit it to start a new one", ch.ID)
	}
	return nil
}

// sessionChannelID is the ID of the channel a session's calls of a skill
// share: derived from both, so every replica finds the same channel without
// keeping a mapping.
func sessionChannelID(call *mcpgate.Call) string {
	h := sha256.Sum256([]byte(call.Agent.ID + "\x00" + call.Skill.Name + "\x00" + call.SessionID))
	return "ch_s" + hex.EncodeToString(h[:12])
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails, per crypto/rand
	return hex.EncodeToString(b)
}

// newChatMessage returns the chat_message that carries the call: text, the
// chat tool's message, for the chat tool; the tool's name and arguments for
// a tool the agent declares.
func newChatMessage(ch *mcpgate.Channel, call *mcpgate.Call, text string) *mcpgate.Message {
	m := &mcpgate.Message{
		ChannelID: ch.ID, AgentID: call.Agent.ID, Skill: call.Skill.Name,
		Type: mcpgate.MessageChat, Sender: call.Caller.Identity, Tool: call.Tool.Name,
		Body: mcpgate.MessageBody{Attachments: call.Attachments}, Trace: call.Trace,
	}
	if isChat(call) {
		m.Body.Text = text
	} else {
		m.Arguments = call.Arguments
	}
	return m
}
