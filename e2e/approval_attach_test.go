package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestApprovalAttachmentRetry drives the binary: a gated call handing a
// file with an idempotency key is left pending by a restart and retried
// with the same key and arguments after the approval was approved. The
// retry runs on that approval (it is bound to the file's ID as the caller
// sent it, not to the signed URL made for each try) instead of asking for
// another, and the backend gets a download URL signed after the approve,
// which works.
func TestApprovalAttachmentRetry(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	s := newGated(t)
	alice := &apiClient{t: t, base: s.g.URL + "/api/v1", key: s.alice}
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	alice.mustDo("POST", "/files/presign-upload", map[string]any{"filename": "old.txt", "content_type": "text/plain", "size": 5}, http.StatusCreated, &p)
	if status, body := rawRequest(t, "PUT", p.UploadURL, strings.NewReader("hello")); status != http.StatusOK {
		t.Fatalf("upload: HTTP %d: %s", status, body)
	}
	args := `{"path":"/tmp/old.txt","attachments":[{"file_id":"` + p.FileID + `"}],"idempotency_key":"del-att"}`
	lost := s.callLater(1, "delete", args)
	before := s.pending(t)
	if strings.Contains(string(before.Arguments), "url") {
		t.Fatalf("the approval holds a signed URL: %s", before.Arguments)
	}
	s.g.stop()
	<-lost
	s.start(t)
	s.session = openSession(t, s.g.URL+"/files/mcp", bearer(s.alice))
	if st := s.decide(t, s.alice, before.ID, "approve", ""); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	r := awaitRetry(t, s, s.callLater(2, "delete", args))
	if text, isErr := resultText(t, r); isErr {
		t.Fatalf("retried call: %s", text)
	}
	seen := s.api.seen()
	if len(seen) != 1 {
		t.Fatalf("backend saw %q; want the call once", seen)
	}
	var body struct {
		Attachments []struct{ URL string } `json:"attachments"`
	}
	if json.Unmarshal([]byte(seen[0]), &body) != nil || len(body.Attachments) != 1 {
		t.Fatalf("backend body %s", seen[0])
	}
	if status, got := rawRequest(t, "GET", body.Attachments[0].URL, nil); status != http.StatusOK || got != "hello" {
		t.Fatalf("the attachment's URL after the approve: HTTP %d %q", status, got)
	}
}

// awaitRetry waits for the answer to a retry of an approved call, failing
// if the retry asks for a new approval instead.
func awaitRetry(t *testing.T, s *gated, done <-chan *rpcResponse) *rpcResponse {
	t.Helper()
	for {
		select {
		case r := <-done:
			return r
		case <-time.After(100 * time.Millisecond):
		}
		if _, list := s.approvalsIn(t, s.alice, "pending"); len(list) > 0 {
			t.Fatalf("the retry of an approved call asked for another approval: %+v", list)
		}
	}
}
