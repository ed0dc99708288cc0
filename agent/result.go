package agent

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate"
)

// MetaContextID is the key in a result's _meta that names the channel of
// the call, so a host can continue the conversation with context_id.
const MetaContextID = "mcpgate/context_id"

// result maps an agent's final reply to the tool result: its parts, or its
// text as one block; its data as structured content; an agent_error as a
// result with IsError.
func result(reply *mcpgate.Message) *mcpgate.Result {
	res := &mcpgate.Result{Content: reply.Body.Parts}
	if len(res.Content) == 0 {
		res.Content = []mcpgate.Content{mcpgate.TextContent(reply.Body.Text)}
	}
	if data := reply.Body.Data; isObject(data) {
		res.StructuredContent = data
	} else if len(data) > 0 && mcpgate.ValidJSON(data) {
		// MCP's structured content is an object: other JSON goes as text.
		res.Content = append(res.Content, mcpgate.TextContent(string(data)))
	}
	if reply.Type == mcpgate.MessageError {
		res.IsError = true
		if reply.Body.Text == "" && len(reply.Body.Parts) == 0 {
			res.Content = []mcpgate.Content{mcpgate.TextContent("The agent reported an error without a message.")}
		}
	}
	res.Meta = contextMeta(reply.ChannelID)
	return res
}

// contextMeta is a result's _meta naming the call's channel.
func contextMeta(channelID string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{MetaContextID: channelID}) // a map of strings always encodes
	return b
}

// isObject reports whether raw holds a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}
