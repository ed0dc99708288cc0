package agentkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestAttachments: a request lists its message's attachments and reads
// their bytes through the signed URL, without sending the agent key; a
// refused URL is a StatusError and a short body an error.
func TestAttachments(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "":
			http.Error(w, "a key was sent", http.StatusBadRequest)
		case r.URL.Query().Get("token") != "good":
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":{"message":"the file URL expired"}}`))
		default:
			w.Write([]byte("hello, file"))
		}
	}))
	defer srv.Close()
	good := mcpgate.Attachment{FileID: "file_1", Name: "a.txt", MimeType: "text/plain", Size: 11, URL: srv.URL + "/f?token=good"}
	m := &mcpgate.Message{ID: "msg_1", Body: mcpgate.MessageBody{Attachments: []mcpgate.Attachment{good}}}
	req := newRequest(context.Background(), m, &client{key: testKey, hc: srv.Client()}, nil)
	if got := req.Attachments(); len(got) != 1 || got[0] != good {
		t.Fatalf("Attachments() = %+v", got)
	}
	b, err := req.ReadAttachment(context.Background(), good)
	if err != nil || string(b) != "hello, file" {
		t.Fatalf("ReadAttachment = %q, %v", b, err)
	}
	expired := good
	expired.URL = srv.URL + "/f?token=old"
	if _, err := req.ReadAttachment(context.Background(), expired); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired URL: %v", err)
	}
	long := good
	long.Size = 20
	if _, err := req.ReadAttachment(context.Background(), long); err == nil {
		t.Fatal("a body shorter than the declared size was accepted")
	}
}
