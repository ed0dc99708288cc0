package agent

import (
	"testing"

	"github.com/mcpgate/mcpgate"
)

// FuzzReplyTo checks that any 2xx body of a push target becomes a final
// reply to the pushed message, and that mapping it to a result never
// panics.
func FuzzReplyTo(f *testing.F) {
	f.Add([]byte(`{"type":"agent_reply","body":{"text":"hi","data":{"n":1}}}`))
	f.Add([]byte(`{"type":"agent_error","body":{"parts":[{"type":"text","text":"x"}],"data":[1]}}`))
	f.Add([]byte(`{"type":"chat_message"}`))
	f.Add([]byte(`null`))
	msg := &mcpgate.Message{ID: "msg_1", ChannelID: "ch_1", AgentID: "a", Skill: "s"}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := replyTo(msg, 200, body, 64<<10)
		if !r.Type.Final() || r.InReplyTo != msg.ID || r.ChannelID != msg.ChannelID {
			t.Fatalf("replyTo(%q) = %+v", body, r)
		}
		if res := result(r); len(res.Content) == 0 {
			t.Fatalf("result of %q has no content", body)
		}
	})
}
