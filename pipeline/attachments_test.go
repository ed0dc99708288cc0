package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fakeFiles resolves file f1 of user u1 (ready) and f2 of u1 (pending).
type fakeFiles struct{}

func (fakeFiles) Resolve(_ context.Context, userID, fileID string) (*mcpgate.Attachment, error) {
	switch {
	case userID == "u1" && fileID == "f1":
		return &mcpgate.Attachment{FileID: "f1", Name: "a.txt", MimeType: "text/plain", Size: 5, URL: "http://127.0.0.1/f1"}, nil
	case userID == "u1" && fileID == "f2":
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "file %q is pending, not uploaded", fileID)
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", fileID)
}

// attachCall calls echo as user with args.
func attachCall(h *harness, user, args string) (*mcpgate.Call, error) {
	c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "echo", Arguments: []byte(args),
		Caller: mcpgate.Caller{UserID: user}, Notifier: mcpgate.NopNotifier{}}
	_, err := h.p.Call(context.Background(), c)
	return c, err
}

func TestAttachments(t *testing.T) {
	h := newHarness(t, nil)
	h.p.opts.Attachments = fakeFiles{}
	c, err := attachCall(h, "u1", `{"q":"x","attachments":[{"file_id":"f1","filename":"b.txt"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Attachments) != 1 || c.Attachments[0].Name != "b.txt" || c.Attachments[0].URL == "" {
		t.Fatalf("call.Attachments = %+v", c.Attachments)
	}
	want := `echo {"attachments":[{"file_id":"f1","filename":"b.txt","content_type":"text/plain","size":5,"url":"http://127.0.0.1/f1"}],"q":"x"}`
	if got := h.rest.callLog(); len(got) != 1 || got[0] != want {
		t.Fatalf("backend got %q,\nwant %q", got, want)
	}
}

// TestAttachmentsRelayed: a relayed MCP tool gets each attachment as a
// resource_link block whose uri is the signed URL.
func TestAttachmentsRelayed(t *testing.T) {
	h := newHarness(t, nil)
	h.p.opts.Attachments = fakeFiles{}
	h.p.opts.Backends[mcpgate.SkillMCP] = h.rest
	c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "up_ping", Arguments: []byte(`{"q":"x","attachments":[{"file_id":"f1"}]}`),
		Caller: mcpgate.Caller{UserID: "u1"}, Notifier: mcpgate.NopNotifier{}}
	if _, err := h.p.Call(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := `ping {"attachments":[{"type":"resource_link","uri":"http://127.0.0.1/f1","name":"a.txt","mimeType":"text/plain","size":5,"_meta":{"mcpgate/file_id":"f1"}}],"q":"x"}`
	if got := h.rest.callLog(); len(got) != 1 || got[0] != want {
		t.Fatalf("backend got %q,\nwant %q", got, want)
	}
}

// TestAttachmentsRefused: a missing, foreign or unfinished file refuses the
// whole call before the backend runs, naming the entry's index.
func TestAttachmentsRefused(t *testing.T) {
	for name, tc := range map[string]struct{ user, args, msg string }{
		"foreign":  {"u2", `{"attachments":[{"file_id":"f1"}]}`, "attachments[0].file_id"},
		"missing":  {"u1", `{"attachments":[{"file_id":"f1"},{"file_id":"nope"}]}`, "attachments[1].file_id"},
		"pending":  {"u1", `{"attachments":[{"file_id":"f2"}]}`, "not uploaded"},
		"no id":    {"u1", `{"attachments":[{}]}`, "attachments[0].file_id is missing"},
		"not list": {"u1", `{"attachments":"f1"}`, "must be a list"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.p.opts.Attachments = fakeFiles{}
			_, err := attachCall(h, tc.user, tc.args)
			if mcpgate.ErrorCode(err) != mcpgate.EINVALIDPARAM || !strings.Contains(mcpgate.ErrorMessage(err), tc.msg) {
				t.Fatalf("err = %v, want invalid_param mentioning %q", err, tc.msg)
			}
			if got := h.rest.callLog(); len(got) != 0 {
				t.Fatalf("the backend ran: %q", got)
			}
		})
	}
}
