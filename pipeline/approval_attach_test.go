package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// signingFiles resolves file f1 of user u1 with a new signed URL each
// time, as files.Resolver does, and counts the signatures.
type signingFiles struct {
	mu sync.Mutex
	n  int
}

func (s *signingFiles) Resolve(_ context.Context, userID, fileID string) (*mcpgate.Attachment, error) {
	if userID != "u1" || fileID != "f1" {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", fileID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return &mcpgate.Attachment{FileID: "f1", Name: "a.txt", MimeType: "text/plain", Size: 5, URL: fmt.Sprintf("http://127.0.0.1/f1?sig=%d", s.n)}, nil
}

func (s *signingFiles) signed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// TestApprovalBindsCallerArguments: a gated call with attachments is bound
// to the arguments the caller sent, not to the signed URLs the gateway
// adds (they differ on every try), so a keyed retry after the first try
// was lost attaches to the same approval; and the URLs the backend gets
// are signed after the approve, so they cannot have expired while the
// call waited.
func TestApprovalBindsCallerArguments(t *testing.T) {
	g := newGateHarness(t)
	files := &signingFiles{}
	g.p.opts.Attachments = files
	args := `{"path":"/tmp/z","attachments":[{"file_id":"f1"}],"idempotency_key":"k-att"}`
	lostCtx, lose := context.WithCancel(context.Background())
	lost := g.start(lostCtx, "delete", args)
	a := <-g.approvals.created
	if strings.Contains(string(a.Arguments), "url") || string(a.Arguments) != `{"attachments":[{"file_id":"f1"}],"path":"/tmp/z"}` {
		t.Fatalf("approval arguments = %s; want the caller's, without signed URLs", a.Arguments)
	}
	lose() // the caller lost its connection
	<-lost
	retry := g.start(context.Background(), "delete", args)
	waitAttached(t, g, a)
	g.decide(t, a, mcpgate.ApprovalApproved, "")
	if o := <-retry; o.err != nil || o.res.IsError {
		t.Fatalf("retry: %+v, %v", o.res, o.err)
	}
	last := fmt.Sprintf("sig=%d", files.signed())
	if got := g.rest.callLog(); len(got) != 1 || !strings.Contains(got[0], last) || !strings.Contains(got[0], `"path":"/tmp/z"`) {
		t.Fatalf("backend calls = %q; want one whose URL was signed last (%s), after the approve", got, last)
	}
}

// waitAttached waits until a second call waits on approval a, failing
// when a second approval is asked for instead.
func waitAttached(t *testing.T, g *gateHarness, a *mcpgate.Approval) {
	t.Helper()
	for g.signals.watchers(ApprovalTopic(a.ID)) < 2 {
		if n := g.approvals.count(); n != 1 {
			t.Fatalf("%d approvals after a keyed retry; want 1", n)
		}
		if !mcpgate.Sleep(context.Background(), 5*time.Millisecond) {
			t.Fatal("interrupted")
		}
	}
}
