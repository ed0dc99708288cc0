package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// TestChatMessageCarriesAttachments: the files the pipeline checked ride in
// the chat_message's body, with their signed URLs.
func TestChatMessageCarriesAttachments(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	call := chatCall(testSkill(), `{"message":"read this"}`, "", alice)
	files := []mcpgate.Attachment{{FileID: "file_1", Name: "a.txt", MimeType: "text/plain", Size: 5, URL: "http://127.0.0.1/f"}}
	call.Attachments = files
	done := start(b, context.Background(), call)
	chat := bus.wait(t, isChatTo("read this"))
	if diff := cmp.Diff(files, chat.Body.Attachments); diff != "" {
		t.Errorf("attachments (-want +got):\n%s", diff)
	}
	mustPost(t, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "ok"})
	if got := <-done; got.err != nil {
		t.Fatal(got.err)
	}
}
